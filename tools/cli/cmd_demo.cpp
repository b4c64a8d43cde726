// opd demo: the main job. For now it shows the core on a small example operator set: schema
// parsing, registration, the computed table, dispatch to CPU and Meta kernels, a kernel
// override and its restoration, and the missing-kernel error.

#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/function_schema.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd::cli {
namespace {

// A float32 CPU tensor owning a copy of `values`.
Tensor cpu_tensor(std::vector<float> values) {
  auto* buffer = new std::vector<float>(std::move(values));
  int64_t n = static_cast<int64_t>(buffer->size());
  return from_blob(
      buffer->data(), std::vector<int64_t>{n}, std::vector<int64_t>{1}, ScalarType::Float32,
      Device(DeviceType::CPU),
      [](void*, void* ctx) { delete static_cast<std::vector<float>*>(ctx); }, buffer, nullptr);
}

Tensor scale_cpu(const Tensor& self, double factor) {
  std::vector<float> out(static_cast<size_t>(self.numel()));
  const float* in = self.data_ptr<float>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(in[i] * factor);
  return cpu_tensor(std::move(out));
}

Tensor scale_meta(const Tensor& self, double) {
  return from_blob(nullptr, self.sizes(), ScalarType::Float32, Device(DeviceType::Meta));
}

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

void run_demo() {
  section("opd schema: canonical forms and a parse error");
  for (const char* s : {"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                        "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                        "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"}) {
    std::cout << parse_schema(s).to_string() << "\n";
  }
  try {
    parse_schema("example::broken(Tensor x, -> Tensor");
  } catch (const SchemaParseError& e) {
    std::cout << "error: " << e.msg() << "\n";
  }

  section("registering example::scale (def, CPU and Meta kernels) and example::twice (composite)");
  Library def(Library::DEF, "example");
  def.def("scale(Tensor self, float factor) -> Tensor");
  def.def("twice(Tensor self) -> Tensor", [](const Tensor& self) {
    // CompositeImplicitAutograd: re-enters the dispatcher, so it works on every backend.
    static auto scale = Dispatcher::singleton().find_schema_or_throw("example::scale", "")
                            .typed<Tensor(const Tensor&, double)>();
    return scale.call(self, 2.0);
  });
  Library cpu(Library::IMPL, "example", DispatchKey::CPU);
  cpu.impl("scale", &scale_cpu);
  Library meta(Library::IMPL, "example", DispatchKey::Meta);
  meta.impl("scale", &scale_meta);

  auto op = Dispatcher::singleton().find_schema_or_throw("example::scale", "");
  section("opd dump example::scale");
  std::cout << op.dump_state() << "\nComputed table:\n" << op.dump_computed_table();

  auto scale = op.typed<Tensor(const Tensor&, double)>();
  auto twice = Dispatcher::singleton().find_schema_or_throw("example::twice", "")
                   .typed<Tensor(const Tensor&)>();
  section("dispatch");
  Tensor x = cpu_tensor({1, 2, 3});
  print("scale(x, 10)        -> ", scale.call(x, 10.0));
  print("twice(x)            -> ", twice.call(x));
  Tensor m = from_blob(nullptr, std::vector<int64_t>{1000000, 1000000}, ScalarType::Float32,
                       Device(DeviceType::Meta));
  print("scale(meta 1e6x1e6) -> ", scale.call(m, 10.0));
  Stack stack{IValue(x), IValue(0.5)};
  op.call_boxed(&stack);
  print("boxed scale(x, 0.5) -> ", stack.back().to_tensor());

  section("overriding the CPU kernel for a scope, then restoring it");
  {
    Library override_lib(Library::IMPL, "example", DispatchKey::CPU);
    override_lib.impl("scale", [](const Tensor& self, double) { return cpu_tensor({-1, -1, -1}); });
    print("overridden scale(x) -> ", scale.call(x, 10.0));
  }
  print("restored scale(x)   -> ", scale.call(x, 10.0));

  section("a backend with no kernel");
  float dummy[3] = {};
  Tensor c = from_blob(dummy, std::vector<int64_t>{3}, ScalarType::Float32, Device(DeviceType::CUDA, 0));
  try {
    scale.call(c, 1.0);
  } catch (const NotImplementedError& e) {
    std::cout << e.msg() << "\n";
  }
}

}  // namespace

void add_demo(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("demo", "Run the main demonstration");
  cmd->callback([] { run_demo(); });
}

}  // namespace opd::cli
