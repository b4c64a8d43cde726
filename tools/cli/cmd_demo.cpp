// opd demo: the main job. Loads the default plugins and prints the plugin table; runs a short
// `opd eval --trace` session (broadcasting, a view, an in-place op, a composite re-entering the
// dispatcher, a Meta computation of a huge shape); explains a missing kernel; trains a two-layer
// MLP with the autograd plugin; and traces one add that requires grad.

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "demo_mlp.h"
#include "eval_program.h"
#include "opd/bind/trace_lines.h"
#include "opd/error.h"
#include "opd/plugin_manager.h"

namespace opd::cli {
namespace {

void section(const std::string& title) { std::cout << "\n== " << title << " ==\n"; }

void print_plugins() {
  for (const auto& s : plugins().list()) {
    std::cout << "  " << s.name << " " << s.version << ": " << to_string(s.state)
              << (s.reason.empty() ? "" : " (" + s.reason + ")") << ", " << s.registrations
              << " registrations\n";
  }
}

// Runs one statement as `opd eval --trace` would, printing the trace and then the value.
void eval_traced(eval::Evaluator& evaluator, const std::string& statement) {
  std::cout << "\nopd eval --trace \"" << statement << "\"\n" << std::flush;
  try {
    bind::Value v;
    {
      DispatchObserverGuard observing(std::make_shared<bind::TracePrinter>(std::cout));
      v = evaluator.run(statement);
    }
    std::cout << bind::repr(v) << "\n";
  } catch (const Error& e) {
    std::cout << "error: " << e.msg() << "\n";
  }
}

struct DemoOptions {
  int64_t steps = 600;
  int64_t hidden = 64;
  uint64_t seed = 0;
  std::string device;  // empty: cuda when its plugin is loaded, else cpu
};

void run_demo(const DemoOptions& o) {
  section("opd plugins: the default set, loaded");
  plugins().load_default();
  print_plugins();

  section("opd eval --trace: every dispatch hop, as it happens");
  eval::Evaluator evaluator;
  // Broadcasting: [2, 3] + [3]; the factories and the add each reach a CPU kernel.
  eval_traced(evaluator, "x = add(ones([2, 3]), arange(0., 3.))");
  // A view: no kernel copies anything; t() shares x's storage.
  eval_traced(evaluator, "y = t(x)");
  // In place, through the view: x sees the change.
  eval_traced(evaluator, "mul_(y, 10); x");
  // A composite: matmul decides on mm and re-enters the dispatcher.
  eval_traced(evaluator, "matmul(x, y)");
  // Meta: a 1e6 x 1e6 float tensor (4 TB) has shapes, strides and dtypes but no memory.
  eval_traced(evaluator, "sum(ones([1000000, 1000000], device='meta'), [1])");

  section("a missing kernel, explained");
  std::cout << "unloading the meta plugin: " << to_string(plugins().unload("meta").state) << "\n";
  eval_traced(evaluator, "ones([2], device='meta')");
  std::cout << "No plugin serves the Meta key any more, so the dispatcher's table has no entry\n"
               "for it: the error lists the keys that do have kernels, and where each came\n"
               "from. Loading the plugin again brings the kernels back: "
            << to_string(plugins().load("meta").state) << "\n";

  section("training a two-layer MLP on a 1,000-point spiral (autograd plugin, SGD)");
  MlpOptions mlp;
  mlp.steps = o.steps;
  mlp.hidden = o.hidden;
  mlp.seed = o.seed;
  bool have_cuda = false;
  for (const auto& s : plugins().list())
    have_cuda |= s.name == "cuda" && s.state == PluginState::Loaded;
  mlp.device = Device(o.device.empty() ? (have_cuda ? "cuda" : "cpu") : o.device);
  std::cout << "device " << mlp.device.str() << ", hidden " << mlp.hidden << ", " << mlp.steps
            << " steps, seed " << mlp.seed << "\n";
  MlpResult r = train_spiral_mlp(mlp, std::cout);
  std::cout << "final training accuracy: " << r.accuracy * 100 << "%\n";

  section("--trace of an add that requires grad: the Autograd wrapper, then the CPU kernel");
  eval_traced(evaluator, "w = requires_grad_(ones([3])); add(w, tensor([1., 2., 3.]))");
}

}  // namespace

void add_demo(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "Run the main demonstration");
  static DemoOptions options;
  cmd->add_option("--steps", options.steps, "Training steps")->check(CLI::PositiveNumber);
  cmd->add_option("--hidden", options.hidden, "Hidden layer size")->check(CLI::PositiveNumber);
  cmd->add_option("--seed", options.seed, "Seed of the data and the weights");
  cmd->add_option("--device", options.device,
                  "Training device (default: cuda when its plugin is loaded, else cpu)");
  cmd->callback([&exit_code] {
    try {
      run_demo(options);
    } catch (const Error& e) {
      std::cerr << "opd demo: " << e.msg() << "\n";
      exit_code = 1;
    }
  });
}

}  // namespace opd::cli
