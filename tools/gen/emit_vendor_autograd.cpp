// src/autograd.cpp for a vendor's namespace: each derivatives.yaml entry becomes an
// opd::autograd::Function (opd/autograd_function.h), registered as its operator's Autograd
// kernel. A vendor's plugin sees only the plugin API, not the autograd plugin's node classes
// that aten's generated kernels use (emit_autograd.cpp); a Function reaches the autograd plugin
// through dispatched operators, and the graph it records keeps the vendor's plugin mapped while
// its backward can still run.

#include <fmt/format.h>

#include <set>

#include "cpp_types.h"
#include "derivatives.h"
#include "emit.h"
#include "formula_text.h"
#include "opd/error.h"

namespace opd::gen {
namespace {

bool is_plain_tensor(const Argument& a) { return a.type()->kind() == TypeKind::Tensor; }

// What a vendor entry may be: tensor and non-tensor arguments, none written, one Tensor result.
void check_supported(const DerivativeInfo& d, const std::string& path) {
  const FunctionSchema& s = d.function->schema;
  auto fail = [&](const std::string& what) {
    throw Error(
        fmt::format("{}:{}: {}: {} (write its Autograd kernel with "
                    "opd::autograd::Function and autograd::function_kernel instead)",
                    path, d.line, s.operator_name().to_string(), what));
  };
  for (const Argument& a : s.arguments()) {
    if (a.is_write()) fail(fmt::format("argument '{}' is written", a.name()));
    const Type& t = *a.type();
    const bool optional_tensor =
        t.kind() == TypeKind::Optional && t.contained()[0]->kind() == TypeKind::Tensor;
    const bool tensor_list =
        t.kind() == TypeKind::List && t.contained()[0]->kind() == TypeKind::Tensor;
    if (optional_tensor || tensor_list) {
      fail(
          fmt::format("argument '{}' is {}; derivatives of a vendor operator take Tensor and "
                      "non-tensor arguments",
                      a.name(), t.str()));
    }
  }
  if (s.returns().size() != 1 || !is_plain_tensor(s.returns()[0]) || s.returns()[0].is_write()) {
    fail("derivatives of a vendor operator need exactly one Tensor result");
  }
  if (!d.output_differentiability.empty() && !d.output_differentiability[0]) {
    fail("its only result is not differentiable: it needs no derivatives entry");
  }
}

std::string function_class(const DerivativeInfo& d, const std::string& ns,
                           const std::string& path) {
  check_supported(d, path);
  const FunctionSchema& s = d.function->schema;
  const std::vector<Param> params = cpp_params(s);
  std::set<std::string> used;
  for (const auto& f : d.formulas) {
    for (const std::string& v : variables(f.formula)) used.insert(v);
  }
  // Forward: call the operator (below autograd: apply excludes the autograd keys), then keep
  // what the formulas read.
  std::vector<std::string> saved_tensors;
  std::string save_values, unpack;
  for (size_t i = 0; i < params.size(); ++i) {
    const Argument& a = s.arguments()[i];
    const std::string& name = params[i].name;
    if (!used.count(a.name())) continue;
    if (is_plain_tensor(a)) {
      unpack += fmt::format("    const opd::Tensor& {} = saved[{}];\n", name, saved_tensors.size());
      saved_tensors.push_back(name);
    } else {
      const std::string type = qualify_opd_types(params[i].type);
      save_values +=
          fmt::format("    ctx->saved_data[\"{}\"] = opd::detail::TraitsOf<{}>::box({});\n",
                      a.name(), type, name);
      unpack += fmt::format(
          "    opd::IValue {0}_boxed = ctx->saved_data.at(\"{1}\");\n"
          "    decltype(auto) {0} = opd::detail::TraitsOf<{2}>::get({0}_boxed);\n",
          name, a.name(), type);
    }
  }
  if (used.count("result")) {
    unpack += fmt::format("    const opd::Tensor& result = saved[{}];\n", saved_tensors.size());
    saved_tensors.push_back("result");
  }
  if (!saved_tensors.empty()) {
    unpack = "    opd::autograd::tensor_list saved = ctx->get_saved_variables();\n" + unpack;
  }
  if (used.count("grad")) unpack += "    const opd::Tensor& grad = grads[0];\n";
  std::vector<std::string> forward_params;
  for (const Param& p : params) {
    forward_params.push_back(qualify_opd_types(p.type) + " " + p.name);
  }
  // Backward: one gradient per argument, as Function's backward returns them; needs_input_grad
  // counts tensor arguments only.
  std::string formulas;
  size_t tensor_index = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const Argument& a = s.arguments()[i];
    if (!is_plain_tensor(a)) continue;
    for (const auto& f : d.formulas) {
      if (f.input != a.name()) continue;
      formulas += fmt::format(
          "    if (ctx->needs_input_grad({})) {{\n#line {} \"{}\"\n      grad_inputs[{}] = {};\n"
          "    }}\n",
          tensor_index, f.line, path, i, f.formula);
    }
    ++tensor_index;
  }
  return fmt::format(
      "// {path}:{line}  {name}\n"
      "struct {cls} : opd::autograd::Function<{cls}> {{\n"
      "  static opd::Tensor forward(opd::autograd::AutogradContext* ctx{comma}{fparams}) {{\n"
      "    opd::Tensor result = {ns}::{op}({args});\n"
      "    ctx->save_for_backward({{{saved}}});\n{save_values}"
      "    return result;\n  }}\n\n"
      "  static opd::autograd::tensor_list backward(opd::autograd::AutogradContext* ctx,\n"
      "                                             "
      "[[maybe_unused]] opd::autograd::tensor_list grads) {{\n"
      "{unpack}    opd::autograd::tensor_list grad_inputs({nargs});\n{formulas}"
      "    return grad_inputs;\n  }}\n}};\n\n",
      fmt::arg("path", path), fmt::arg("line", d.line), fmt::arg("name", s.to_string()),
      fmt::arg("cls", d.node_name), fmt::arg("comma", params.empty() ? "" : ", "),
      fmt::arg("fparams", fmt::join(forward_params, ", ")), fmt::arg("ns", ns),
      fmt::arg("op", base_name(s)), fmt::arg("args", name_list(params)),
      fmt::arg("saved", fmt::join(saved_tensors, ", ")), fmt::arg("save_values", save_values),
      fmt::arg("unpack", unpack), fmt::arg("nargs", params.size()), fmt::arg("formulas", formulas));
}

}  // namespace

void emit_vendor_autograd(const std::vector<NativeFunction>& fs,
                          const std::vector<DerivativeInfo>& ds, const EmitOptions& o,
                          const std::string& derivatives_path) {
  const std::string ns = namespace_of(fs);
  std::string classes, impls;
  for (const DerivativeInfo& d : ds) {
    classes += function_class(d, ns, derivatives_path);
    impls += fmt::format(
        "#line {} \"{}\"\n  m.impl(\"{}\", opd::autograd::function_kernel<{}::autograd::{}>());\n",
        d.line, derivatives_path, impl_name(d.function->schema), ns, d.node_name);
  }
  std::string out = fmt::format("// Generated by opd-gen from {}. Do not edit.\n",
                                ds.empty() ? o.yaml_display_name : derivatives_path);
  if (ds.empty()) {
    write_if_changed(o.out_dir + "/src/autograd.cpp",
                     out + "// No derivatives were given (opd_add_plugin's DERIVATIVES).\n");
    return;
  }
  out += fmt::format(
      "// The {0} operators' Autograd kernels: one opd::autograd::Function per entry, whose\n"
      "// forward calls the operator and whose backward runs the entry's formulas.\n\n"
      "#include \"{0}/ops.h\"\n#include \"opd/autograd.h\"\n#include \"opd/library.h\"\n"
      "#include \"opd/ops.h\"\n\n"
      "namespace {0}::autograd {{\n"
      "// The formulas call aten's typed API (opd::mul, ...) and the vendor's unqualified.\n"
      "using namespace opd;\n\n"
      "{1}}}  // namespace {0}::autograd\n\n"
      "OPD_LIBRARY_IMPL({0}, Autograd, m) {{\n{2}}}\n",
      ns, classes, impls);
  write_if_changed(o.out_dir + "/src/autograd.cpp", out);
}

}  // namespace opd::gen
