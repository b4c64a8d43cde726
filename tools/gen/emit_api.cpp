// The typed API: opd::add(...) and friends, Tensor methods, and their definitions.

#include <fmt/format.h>

#include <algorithm>

#include "cpp_types.h"
#include "emit.h"

namespace opd::gen {
namespace {

// The four factory arguments TensorOptions stands for, in schema order.
constexpr const char* kOptionNames[] = {"dtype", "layout", "device", "pin_memory"};

// Index of `dtype` when the schema has dtype, layout, device, pin_memory in a row.
std::optional<size_t> options_start(const FunctionSchema& s) {
  const auto& args = s.arguments();
  for (size_t i = 0; i + 4 <= args.size(); ++i) {
    bool all = true;
    for (size_t k = 0; k < 4; ++k) all = all && args[i + k].name() == kOptionNames[k];
    if (all) return i;
  }
  return std::nullopt;
}

bool is_out_overload(const FunctionSchema& s) {
  return std::any_of(s.arguments().begin(), s.arguments().end(),
                     [](const Argument& a) { return a.is_out(); });
}

struct Api {
  std::string header;             // declarations in namespace opd
  std::string redispatch_header;  // declarations in namespace opd::redispatch
  std::string methods;            // declarations inside class Tensor
  std::string source;             // definitions
};

std::string signature_type(const FunctionSchema& s) {
  return cpp_return_type(s) + "(" + type_list(cpp_params(s)) + ")";
}

// The internal entry point every public form calls: looks the operator up once.
void emit_entry(const NativeFunction& f, Api& api) {
  const FunctionSchema& s = f.schema;
  auto params = cpp_params(s);
  api.source += fmt::format(
      "// {}\n{} {}({}) {{\n"
      "  static const auto op = lookup<{}>(\"aten::{}\", \"{}\");\n"
      "  return op.call({});\n}}\n\n",
      f.func, cpp_return_type(s), unique_name(s), param_list(params, false), signature_type(s),
      base_name(s), s.overload_name(), name_list(params));
}

// opd::redispatch::<unique name>(ks, args...): the call for the key set `ks`, ignoring the
// thread's included and excluded keys, as ATen's at::redispatch: what a kernel that handled its
// own key calls to pass the call on (the generated Autograd kernels).
void emit_redispatch(const NativeFunction& f, Api& api) {
  const FunctionSchema& s = f.schema;
  auto params = cpp_params(s);
  const std::string args = "DispatchKeySet ks" + std::string(params.empty() ? "" : ", ");
  api.redispatch_header += fmt::format("OPD_API {} {}({}{});\n", cpp_return_type(s), unique_name(s),
                                       args, param_list(params, false));
  api.source += fmt::format(
      "{} redispatch::{}({}{}) {{\n"
      "  static const auto op = ops_detail::lookup<{}>(\"aten::{}\", \"{}\");\n"
      "  return op.redispatch(ks{}{});\n}}\n\n",
      cpp_return_type(s), unique_name(s), args, param_list(params, false), signature_type(s),
      base_name(s), s.overload_name(), params.empty() ? "" : ", ", name_list(params));
}

void emit_function(const NativeFunction& f, Api& api) {
  const FunctionSchema& s = f.schema;
  auto params = cpp_params(s);
  const std::string ret = cpp_return_type(s);
  const std::string entry = "ops_detail::" + unique_name(s);
  if (is_out_overload(s)) {
    // name_out(outs..., args...) with defaults, as ATen; name_outf(args..., outs...) without.
    std::vector<Param> outs, ins;
    for (size_t i = 0; i < params.size(); ++i) {
      (s.arguments()[i].is_out() ? outs : ins).push_back(params[i]);
    }
    std::vector<Param> reordered = outs;
    reordered.insert(reordered.end(), ins.begin(), ins.end());
    api.header +=
        fmt::format("OPD_API {} {}_out({});\n", ret, base_name(s), param_list(reordered, true));
    api.header +=
        fmt::format("OPD_API {} {}_outf({});\n", ret, base_name(s), param_list(params, false));
    api.source += fmt::format("{} {}_out({}) {{\n  return {}({});\n}}\n", ret, base_name(s),
                              param_list(reordered, false), entry, name_list(params));
    api.source += fmt::format("{} {}_outf({}) {{\n  return {}({});\n}}\n\n", ret, base_name(s),
                              param_list(params, false), entry, name_list(params));
    return;
  }
  auto opt = options_start(s);
  if (!opt) {
    api.header += fmt::format("OPD_API {} {}({});\n", ret, base_name(s), param_list(params, true));
    api.source += fmt::format("{} {}({}) {{\n  return {}({});\n}}\n\n", ret, base_name(s),
                              param_list(params, false), entry, name_list(params));
    return;
  }
  // The full form, without defaults up to pin_memory, and the TensorOptions form.
  std::vector<Param> full = params;
  for (size_t i = 0; i < *opt + 4; ++i) full[i].default_value.clear();
  api.header += fmt::format("OPD_API {} {}({});\n", ret, base_name(s), param_list(full, true));
  api.source += fmt::format("{} {}({}) {{\n  return {}({});\n}}\n", ret, base_name(s),
                            param_list(full, false), entry, name_list(params));
  std::vector<Param> with_options(params.begin(), params.begin() + *opt);
  with_options.push_back({"TensorOptions", "options", "{}"});
  with_options.insert(with_options.end(), params.begin() + *opt + 4, params.end());
  std::vector<std::string> forwarded;
  for (size_t i = 0; i < params.size(); ++i) forwarded.push_back(params[i].name);
  forwarded[*opt] = "options.dtype_opt()";
  forwarded[*opt + 1] = "options.layout_opt()";
  forwarded[*opt + 2] = "options.device_opt()";
  forwarded[*opt + 3] = "options.pinned_memory_opt()";
  api.header +=
      fmt::format("OPD_API {} {}({});\n", ret, base_name(s), param_list(with_options, true));
  api.source +=
      fmt::format("{} {}({}) {{\n  return detail::finish_factory({}({}), options);\n}}\n\n", ret,
                  base_name(s), param_list(with_options, false), entry, fmt::join(forwarded, ", "));
}

void emit_method(const NativeFunction& f, Api& api) {
  const FunctionSchema& s = f.schema;
  auto params = cpp_params(s);
  if (params.empty() || params[0].name != "self") return;  // not a method of self
  std::vector<Param> rest(params.begin() + 1, params.end());
  const bool in_place = s.arguments()[0].is_write();
  const std::string ret = in_place ? "const Tensor&" : cpp_return_type(s);
  api.methods += fmt::format("  {} {}({}) const;\n", ret, base_name(s), param_list(rest, true));
  const std::string self = in_place ? "const_cast<Tensor&>(*this)" : "*this";
  std::string args = self + (rest.empty() ? "" : ", " + name_list(rest));
  if (in_place) {
    api.source += fmt::format(
        "const Tensor& Tensor::{}({}) const {{\n  ops_detail::{}({});\n  return *this;\n}}\n\n",
        base_name(s), param_list(rest, false), unique_name(s), args);
  } else {
    api.source += fmt::format("{} Tensor::{}({}) const {{\n  return ops_detail::{}({});\n}}\n\n",
                              ret, base_name(s), param_list(rest, false), unique_name(s), args);
  }
}

}  // namespace

void emit_api(const std::vector<NativeFunction>& fs, const EmitOptions& o) {
  Api api;
  std::string entries;
  for (const NativeFunction& f : fs) {
    Api one;
    emit_entry(f, one);
    entries += one.source;
    emit_redispatch(f, api);
    if (f.function_variant) emit_function(f, api);
    if (f.method_variant) emit_method(f, api);
  }
  const std::string banner =
      fmt::format("// Generated by opd-gen from {}. Do not edit.\n", o.yaml_display_name);
  write_if_changed(
      o.out_dir + "/include/opd/ops.h",
      banner +
          "// The typed API: every aten operator as a C++ function that calls through the\n"
          "// dispatcher. See tools/gen/README.md for the naming rules.\n"
          "#pragma once\n\n"
          "#include <optional>\n#include <string_view>\n#include <tuple>\n#include <vector>\n\n"
          "#include \"opd/generator.h\"\n#include \"opd/tensor.h\"\n"
          "#include \"opd/tensor_options.h\"\n\n"
          "namespace opd {\n\n" +
          api.header + "\nnamespace redispatch {\n\n" + api.redispatch_header +
          "\n}  // namespace redispatch\n}  // namespace opd\n\n"
          "#include \"opd/tensor_operators.h\"\n");
  write_if_changed(o.out_dir + "/include/opd/tensor_methods.inc",
                   banner + "// Included inside class Tensor (opd/tensor.h).\n" + api.methods);
  write_if_changed(
      o.out_dir + "/src/ops.cpp",
      banner +
          "#include \"opd/ops.h\"\n\n#include \"opd/dispatcher.h\"\n\n"
          "namespace opd {\nnamespace detail {\n"
          "Tensor finish_factory(Tensor t, const TensorOptions& options);\n"
          "}  // namespace detail\n"
          "namespace ops_detail {\nnamespace {\n\n"
          "// Each operator is looked up once: the aten schemas are registered by this\n"
          "// library and live as long as it does.\n"
          "template <class Sig>\nTypedOperatorHandle<Sig> lookup(std::string_view name, "
          "std::string_view overload) {\n"
          "  return Dispatcher::singleton().find_schema_or_throw(name, "
          "overload).typed<Sig>();\n}\n\n"
          "}  // namespace\n\n" +
          entries + "}  // namespace ops_detail\n\n" + api.source + "}  // namespace opd\n");
}

}  // namespace opd::gen
