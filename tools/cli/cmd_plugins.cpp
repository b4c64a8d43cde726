// opd plugins / opd load / opd check: the plugin table, loading one plugin, and the vendor's
// consistency check of the default set.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/plugin_manager.h"

namespace opd::cli {
namespace {

std::string joined(const std::vector<DispatchKey>& keys) {
  std::string out;
  for (DispatchKey k : keys) out += (out.empty() ? "" : ",") + std::string(to_string(k));
  return out;
}

nlohmann::json to_json(const PluginStatus& s) {
  nlohmann::json keys = nlohmann::json::array(), served = nlohmann::json::array();
  for (DispatchKey k : s.dispatch_keys) keys.push_back(to_string(k));
  for (DispatchKey k : s.served_keys) served.push_back(to_string(k));
  return {{"name", s.name},
          {"version", s.version},
          {"state", to_string(s.state)},
          {"reason", s.reason},
          {"keys", keys},
          {"served_keys", served},
          {"kernels", s.registrations},
          {"requires", s.requires_},
          {"load", s.load_default ? "default" : "on-demand"},
          {"library", s.library},
          {"manifest", s.manifest}};
}

// `keys` are the manifest's; `serves` the keys a loaded plugin registered kernels on. Each
// column is as wide as its widest cell (keys such as "Autograd,CompositeImplicitAutograd,..."
// are long), the header's included; `kernels` is right-aligned, the last column unpadded.
void print_table(const std::vector<PluginStatus>& all) {
  std::vector<std::vector<std::string>> rows = {
      {"plugin", "version", "state", "keys", "serves", "kernels", "library / reason"}};
  for (const auto& s : all) {
    rows.push_back({s.name, s.version, std::string(to_string(s.state)), joined(s.dispatch_keys),
                    joined(s.served_keys), std::to_string(s.registrations),
                    s.reason.empty() ? s.library : s.reason});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  constexpr size_t kKernels = 5;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i + 1 < row.size(); ++i) {
      line += i == kKernels ? fmt::format("{:>{}}", row[i], width[i])
                            : fmt::format("{:<{}}", row[i], width[i]);
      line += "  ";
    }
    std::cout << line << row.back() << "\n";
  }
}

}  // namespace

void add_plugins(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("plugins", "List plugins found in the search path (reads manifests only)");
  static bool json = false, load = false;
  cmd->add_flag("--json", json, "Print JSON");
  cmd->add_flag("--load", load, "Load the default set first, to show what they register");
  cmd->callback([] {
    if (load) plugins().load_default();
    auto all = plugins().list();
    if (json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& s : all) out.push_back(to_json(s));
      std::cout << out.dump(2) << "\n";
    } else {
      print_table(all);
    }
  });

  auto* load_cmd = app.add_subcommand("load", "Load one plugin (name or manifest path) and report");
  static std::string target;
  load_cmd->add_option("plugin", target, "Plugin name or manifest path")->required();
  load_cmd->callback([&exit_code] {
    PluginStatus s = plugins().load(target);
    print_table({s});
    if (s.state != PluginState::Loaded) exit_code = 1;
  });
}

void add_check(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "check", "Load the default plugins (and --plugin ones); report every problem; exit 1 on any");
  static std::vector<std::string> extra;
  cmd->add_option("--plugin", extra, "Also load this plugin (name or manifest path)");
  cmd->callback([&exit_code] {
    int problems = 0;
    auto report = [&](const std::string& what) {
      std::cout << "problem: " << what << "\n";
      ++problems;
    };
    for (const auto& s : plugins().load_default()) {
      if (s.state == PluginState::Failed)
        report(fmt::format("plugin {} failed: {}", s.name, s.reason));
    }
    for (const auto& p : extra) {
      try {
        plugins().load(p);
      } catch (const Error& e) {
        report(fmt::format("plugin {} failed: {}", p, e.msg()));
      }
    }
    auto& d = Dispatcher::singleton();
    for (const auto& name : d.find_dangling_impls()) {
      auto op = d.find_op(name);
      report(fmt::format("{} has kernels but no schema (a dangling impl):\n{}", name.to_string(),
                         op ? op->dump_state() : ""));
    }
    try {
      d.check_invariants();
    } catch (const Error& e) {
      report(e.msg());
    }
    for (const auto& s : plugins().list()) {
      if (s.state == PluginState::Loaded || s.state == PluginState::Unavailable) {
        std::cout << fmt::format("ok: plugin {} {} {}{}\n", s.name, s.version, to_string(s.state),
                                 s.reason.empty() ? "" : " (" + s.reason + ")");
      }
    }
    std::cout << fmt::format("{} operators, {} problem(s)\n", d.all_op_names().size(), problems);
    if (problems) exit_code = 1;
  });
}

}  // namespace opd::cli
