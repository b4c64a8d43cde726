// opd eval "PROGRAM": runs a small Python-like program of operator calls through the
// dispatcher, with the default plugins loaded, and prints the last value as PyTorch would.

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "eval_program.h"
#include "opd/bind/trace_lines.h"
#include "opd/error.h"
#include "opd/fx/capture.h"
#include "opd/generator.h"
#include "opd/plugin_manager.h"

namespace opd::cli {

void add_eval(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Evaluate operator calls: statements `name = expr` or `expr` separated by ';', the last "
      "one's value printed, e.g. \"x = ones([2, 3]); add(x, tensor([1., 2., 3.]), alpha=2)\"");
  static std::string program, device, dtype;
  static std::optional<uint64_t> seed;
  static bool json = false, trace = false, graph = false;
  cmd->add_option("program", program, "The program")->required();
  cmd->add_option("--device", device, "Default device of factory calls and tensor literals");
  cmd->add_option("--dtype", dtype, "Default dtype of factory calls and tensor literals");
  cmd->add_option("--seed", seed, "Seed the random generator first (manual_seed)");
  cmd->add_flag("--json", json, "Print the value as JSON");
  cmd->add_flag("--trace", trace, "Print every dispatch hop to stderr as it happens");
  cmd->add_flag("--graph", graph,
                "Print the graph of the operators the program ran (make_fx's, as torch.fx's "
                "Python source) instead of its value");
  cmd->callback([&exit_code] {
    try {
      bind::FactoryDefaults defaults;
      if (!device.empty()) defaults.device = Device(device);
      if (!dtype.empty()) defaults.dtype = parse_scalar_type(dtype);
      for (const PluginStatus& s : plugins().load_default()) {
        if (s.state == PluginState::Failed) {
          std::cerr << "opd eval: plugin " << s.name << " failed: " << s.reason << "\n";
        }
      }
      if (seed) manual_seed(*seed);
      eval::Evaluator evaluator(defaults);
      std::optional<DispatchObserverGuard> observing;
      if (trace) observing.emplace(std::make_shared<bind::TracePrinter>(std::cerr));
      std::shared_ptr<fx::CaptureMode> capturing;
      std::optional<DispatchModeGuard> capture_guard;
      if (graph) {
        capturing = std::make_shared<fx::CaptureMode>();
        capture_guard.emplace(capturing);
      }
      bind::Value result = evaluator.run(program);
      capture_guard.reset();
      observing.reset();  // printing reads values back through the dispatcher: not traced
      if (capturing) {
        capturing->set_output(result.value);
        std::string code = capturing->graph().code();
        code.erase(0, code.find_first_not_of('\n'));
        code.erase(code.find_last_not_of(' ') + 1);
        std::cout << code;
        return;
      }
      if (json) {
        std::cout << bind::to_json(result).dump() << "\n";
      } else {
        std::cout << bind::repr(result) << "\n";
      }
    } catch (const Error& e) {
      std::cout << std::flush;
      std::cerr << e.msg() << "\n";
      exit_code = 1;
    } catch (const std::exception& e) {  // a kernel may throw anything
      std::cout << std::flush;
      std::cerr << e.what() << "\n";
      exit_code = 1;
    } catch (...) {  // the evaluator names the operator of a kernel's; this is the backstop
      std::cout << std::flush;
      std::cerr << "opd eval: an exception that is not a std::exception was thrown\n";
      exit_code = 1;
    }
  });
}

}  // namespace opd::cli
