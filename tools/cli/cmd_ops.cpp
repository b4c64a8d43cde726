// opd ops / opd dump: the operators the dispatcher knows, and one operator's state.

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "opd/dispatcher.h"
#include "opd/plugin_manager.h"

namespace opd::cli {
namespace {

// The operator's tags by name, for --json (Note [Operator tags]).
nlohmann::json tag_names(const OperatorHandle& op) {
  nlohmann::json out = nlohmann::json::array();
  for (Tag t : op.tags().list()) out.push_back(to_string(t));
  return out;
}

// The definition's alias analysis kind ("FROM_SCHEMA"); null without a schema.
nlohmann::json alias_analysis_name(const OperatorHandle& op) {
  auto kind = op.entry().alias_analysis();
  return kind ? nlohmann::json(std::string(to_string(*kind))) : nlohmann::json(nullptr);
}

}  // namespace

void add_ops(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("ops", "List the operators registered by the default plugins");
  static bool json = false;
  cmd->add_flag("--json", json, "Print JSON");
  cmd->callback([] {
    plugins().load_default();
    auto& d = Dispatcher::singleton();
    nlohmann::json out = nlohmann::json::array();
    for (const auto& name : d.all_op_names()) {
      auto op = d.find_op(name);
      if (!op) continue;
      if (json) {
        out.push_back({{"name", name.to_string()},
                       {"schema", op->has_schema() ? op->schema().to_string() : ""},
                       {"tags", tag_names(*op)},
                       {"debug", op->debug()}});
      } else {
        std::cout << (op->has_schema() ? op->schema().to_string()
                                       : name.to_string() + " (no schema)")
                  << "\n";
      }
    }
    if (json) std::cout << out.dump(2) << "\n";
  });
}

void add_dump(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("dump", "Print an operator's registrations and computed table");
  static std::string name;
  static bool json = false;
  cmd->add_option("op", name, "Operator, e.g. aten::add.Tensor")->required();
  cmd->add_flag("--json", json, "Print JSON");
  cmd->callback([&exit_code] {
    plugins().load_default();
    auto op = Dispatcher::singleton().find_op(parse_operator_name(name));
    if (!op) {
      std::cerr << "opd dump: no operator named " << name << "\n";
      exit_code = 1;
      return;
    }
    if (json) {
      nlohmann::json out = {{"name", op->operator_name().to_string()},
                            {"schema", op->has_schema() ? op->schema().to_string() : ""},
                            {"tags", tag_names(*op)},
                            {"alias_analysis", alias_analysis_name(*op)},
                            {"state", op->dump_state()},
                            {"computed_table", op->dump_computed_table()}};
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << op->dump_state() << "\nComputed table:\n" << op->dump_computed_table();
    }
  });
}

}  // namespace opd::cli
