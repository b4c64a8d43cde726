// opd demo: the main job. Loads the default plugins and shows, on the example plugin's
// operators: the plugin table, schema parsing, the computed dispatch table, dispatch to CPU and
// Meta kernels and to a composite that re-enters the dispatcher, a kernel override and its
// restoration, the missing-kernel error, and unloading a plugin whose tensors are still alive.

#include <iostream>
#include <vector>

#include "commands.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/function_schema.h"
#include "opd/library.h"
#include "opd/plugin_manager.h"
#include "opd/tensor.h"

namespace opd::cli {
namespace {

void print(const char* label, const Tensor& t) {
  std::cout << label << t.str();
  if (t.device().type == DeviceType::CPU) {
    std::cout << " = [";
    for (int64_t i = 0; i < t.numel(); ++i) std::cout << (i ? ", " : "") << t.data_ptr<float>()[i];
    std::cout << "]";
  }
  std::cout << "\n";
}

void section(const char* title) { std::cout << "\n== " << title << " ==\n"; }

void print_plugins() {
  for (const auto& s : plugins().list()) {
    std::cout << "  " << s.name << " " << s.version << ": " << to_string(s.state)
              << (s.reason.empty() ? "" : " (" + s.reason + ")") << ", " << s.registrations
              << " registrations\n";
  }
}

void run_demo() {
  section("opd plugins: the default set, loaded");
  plugins().load_default();
  print_plugins();

  section("opd schema: canonical forms and a parse error");
  for (const char* s :
       {"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
        "indices)",
        "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"}) {
    std::cout << parse_schema(s).to_string() << "\n";
  }
  try {
    parse_schema("example::broken(Tensor x, -> Tensor");
  } catch (const SchemaParseError& e) {
    std::cout << "error: " << e.msg() << "\n";
  }

  auto& d = Dispatcher::singleton();
  auto op = d.find_schema_or_throw("example::scale", "");
  section("opd dump example::scale: registrations and computed table");
  std::cout << op.dump_state() << "\nComputed table:\n" << op.dump_computed_table();

  auto scale = op.typed<Tensor(const Tensor&, double)>();
  auto twice = d.find_schema_or_throw("example::twice", "").typed<Tensor(const Tensor&)>();
  section("dispatch");
  std::vector<float> data = {1, 2, 3};
  Tensor x = from_blob(data.data(), {3}, ScalarType::Float32);
  print("scale(x, 10)            -> ", scale.call(x, 10.0));
  print("twice(x) (composite)    -> ", twice.call(x));
  Tensor m = from_blob(nullptr, {1000000, 1000000}, ScalarType::Float32, Device(DeviceType::Meta));
  print("scale(meta 1e6 x 1e6)   -> ", scale.call(m, 10.0));
  print("twice(meta) (composite) -> ", twice.call(m));
  Stack stack{IValue(x), IValue(0.5)};
  op.call_boxed(&stack);
  print("boxed scale(x, 0.5)     -> ", stack.back().to_tensor());
  stack.clear();

  section("overriding the CPU kernel for a scope, then restoring it (the override is logged)");
  std::cout << std::flush;
  {
    Library override_lib(Library::IMPL, "example", DispatchKey::CPU);
    override_lib.impl("scale", [](const Tensor& self, double) { return self; });
    print("overridden scale(x, 10) -> ", scale.call(x, 10.0));
  }
  print("restored scale(x, 10)   -> ", scale.call(x, 10.0));

  section("a backend with no kernel");
  Tensor c = from_blob(data.data(), {3}, ScalarType::Float32, Device(DeviceType::CUDA, 0));
  try {
    scale.call(c, 1.0);
  } catch (const NotImplementedError& e) {
    std::cout << e.msg() << "\n";
  }

  section("unloading the example plugin while one of its tensors is alive");
  Tensor kept = scale.call(x, 3.0);
  PluginStatus s = plugins().unload("example");
  std::cout << "unload: " << to_string(s.state) << " (" << s.reason << ")\n";
  try {
    d.find_schema_or_throw("example::scale", "");
  } catch (const Error& e) {
    std::cout << "after unload: " << e.msg() << "\n";
  }
  print("the tensor is still valid: ", kept);
  kept = Tensor();
  std::cout << "after the last tensor is gone: " << to_string(plugins().status("example").state)
            << "\n";
}

}  // namespace

void add_demo(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "Run the main demonstration");
  cmd->callback([] { run_demo(); });
}

}  // namespace opd::cli
