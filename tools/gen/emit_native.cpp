// include/opd/native/<Key>.h and src/register_<Key>.cpp: the kernels a plugin must define for a
// key, and their registration; include/opd/native/meta_functions.h, the meta functions of the
// structured operators (Note [Structured kernels] in structured.h).

#include <fmt/format.h>

#include <map>

#include "cpp_types.h"
#include "emit.h"
#include "structured.h"

namespace opd::gen {
namespace {

// What one key's header and registration source hold.
struct KeyCode {
  std::string decls;     // kernel and impl declarations
  std::string wrappers;  // the structured variants' kernels, in register_<Key>.cpp
  std::string regs;      // m.impl(...) lines
  bool structured = false;
};

std::string source_comment(const NativeFunction& f, const EmitOptions& o) {
  return fmt::format("// {}:{}  {}\n", o.yaml_display_name, f.line, f.func);
}

std::string registration(const NativeFunction& f, const std::string& fn, const EmitOptions& o) {
  return fmt::format("#line {} \"{}\"\n  m.impl(\"{}\", OPD_FN({}));\n", f.line,
                     o.yaml_display_name, impl_name(f.schema), fn);
}

// "first, rest", or "first" alone: an operator may have no argument but `out`.
std::string after(const std::string& first, const std::string& rest) {
  return rest.empty() ? first : first + ", " + rest;
}

// Every parameter of the structured operator but `out`, its last.
std::vector<Param> inputs_of(const StructuredGroup& g) {
  std::vector<Param> params = cpp_params(g.out->schema);
  params.pop_back();
  return params;
}

// The kernel of `v` (the out= operator or a delegate) for a key whose impl is `impl` (empty on
// Meta): meta function, impl, result.
std::string structured_kernel(const StructuredGroup& g, const NativeFunction& v,
                              const std::string& impl) {
  const FunctionSchema& s = v.schema;
  const std::string inputs = name_list(inputs_of(g));
  const bool functional = &v != g.out && !is_in_place(v);
  // The tensor written: the out argument, self in place, none (allocated by meta) functionally.
  const std::string written = &v == g.out  ? cpp_name(s.arguments().back().name())
                              : functional ? std::string()
                                           : cpp_name(s.arguments()[0].name());
  const std::string meta_out = functional ? "Tensor()" : written;
  std::string body;
  if (g.iterator) {
    body = fmt::format("  common::TensorIterator iter = meta::{}({});\n", g.meta_name,
                       after(meta_out, inputs));
    if (!impl.empty()) body += fmt::format("  native::{}({});\n", impl, after("iter", inputs));
    body += functional ? "  return std::move(iter).output();\n"
                       : fmt::format("  {0}.bump_version();\n  return {0};\n", written);
  } else {
    body = fmt::format("  Tensor result = meta::{}({});\n", g.meta_name, after(meta_out, inputs));
    if (!impl.empty()) {
      body += fmt::format("  native::{}({});\n", impl,
                          inputs.empty() ? std::string("result") : inputs + ", result");
    }
    body += functional ? "  return result;\n"
                       : fmt::format(
                             "  if (result.is_same({0})) {{\n    {0}.bump_version();\n"
                             "  }} else {{\n    {0}.copy_(result);  // a proxy output; "
                             "copy_ bumps the version\n  }}\n  return {0};\n",
                             written);
  }
  return fmt::format("{} structured_{}({}) {{\n{}}}\n", cpp_return_type(s), unique_name(s),
                     param_list(cpp_params(s), false), body);
}

bool has_own_kernel(const NativeFunction& f, const std::string& key) {
  for (const auto& [k, kernel] : f.dispatch) {
    if (k == key) return true;
  }
  return false;
}

void add_structured(const StructuredGroup& g, std::map<std::string, KeyCode>& by_key,
                    std::string& meta_decls, const EmitOptions& o) {
  const std::vector<Param> inputs = inputs_of(g);
  const std::string out = "const Tensor& " + cpp_name(g.out->schema.arguments().back().name());
  // The meta function takes `out` first: the output given, or undefined.
  meta_decls += source_comment(*g.out, o) +
                fmt::format("{} {}({});\n", g.iterator ? "common::TensorIterator" : "Tensor",
                            g.meta_name, after(out, param_list(inputs, false)));
  std::vector<std::pair<std::string, std::string>> keys = g.out->dispatch;
  keys.emplace_back("Meta", "");  // no impl: the meta function is the whole kernel
  for (const auto& [key, impl] : keys) {
    KeyCode& code = by_key[key];
    code.structured = true;
    if (!impl.empty() && g.iterator) {
      code.decls +=
          source_comment(*g.out, o) +
          fmt::format("// (structured: computes into iter's output)\nvoid {}({});\n", impl,
                      after("const common::TensorIterator& iter", param_list(inputs, false)));
    } else if (!impl.empty()) {
      const std::string params = param_list(inputs, false);
      code.decls +=
          source_comment(*g.out, o) + fmt::format(
                                          "// (structured: writes {}, contiguous, made by the meta "
                                          "function)\nvoid {}({});\n",
                                          cpp_name(g.out->schema.arguments().back().name()), impl,
                                          params.empty() ? out : params + ", " + out);
    }
    std::vector<const NativeFunction*> variants = {g.out};
    variants.insert(variants.end(), g.delegates.begin(), g.delegates.end());
    for (const NativeFunction* v : variants) {
      if (v != g.out && has_own_kernel(*v, key)) continue;  // its own kernel, declared below
      code.wrappers += source_comment(*v, o) + structured_kernel(g, *v, impl);
      code.regs += registration(*v, "structured_" + unique_name(v->schema), o);
    }
  }
}

}  // namespace

void emit_native(const std::vector<NativeFunction>& fs, const EmitOptions& o) {
  std::map<std::string, KeyCode> by_key;
  std::string meta_decls;
  for (const StructuredGroup& g : structured_groups(fs, o.yaml_display_name)) {
    add_structured(g, by_key, meta_decls, o);
  }
  for (const NativeFunction& f : fs) {
    if (f.structured) continue;  // its dispatch entries name impls
    for (const auto& [key, kernel] : f.dispatch) {
      KeyCode& code = by_key[key];
      code.decls +=
          source_comment(f, o) + fmt::format("{} {}({});\n", cpp_return_type(f.schema), kernel,
                                             param_list(cpp_params(f.schema), false));
      code.regs += registration(f, kernel, o);
    }
  }
  const std::string banner =
      fmt::format("// Generated by opd-gen from {}. Do not edit.\n", o.yaml_display_name);
  const std::string includes =
      "#pragma once\n\n#include <cstdint>\n#include <optional>\n#include <string_view>\n"
      "#include <tuple>\n#include <vector>\n\n"
      "#include \"opd/library.h\"\n#include \"opd/tensor.h\"\n\n";
  const std::string iterator_decl = "namespace opd::common {\nclass TensorIterator;\n}\n\n";
  write_if_changed(
      o.out_dir + "/include/opd/native/meta_functions.h",
      banner +
          "// The meta functions of the structured operators (Note [Structured kernels] in\n"
          "// tools/gen/structured.h), defined in plugins/common: each checks the arguments and\n"
          "// builds the iterator, or makes the output, allocating it when `out` is undefined.\n" +
          includes + iterator_decl + "namespace opd::meta {\n\n" + meta_decls +
          "\n}  // namespace opd::meta\n");
  for (const auto& [key, code] : by_key) {
    write_if_changed(
        o.out_dir + "/include/opd/native/" + key + ".h",
        banner +
            fmt::format(
                "// The kernels the plugin serving {} defines (in namespace opd::native), one per\n"
                "// `dispatch:` entry naming {}, and their registration. A kernel left undefined\n"
                "// fails the plugin's link.\n",
                key, key) +
            includes + (code.structured ? iterator_decl : "") + "namespace opd::native {\n\n" +
            code.decls +
            fmt::format("\n// m.impl(...) of every kernel above; call it from "
                        "OPD_LIBRARY_IMPL(aten, {}, m).\n"
                        "void register_{}_kernels(Library& m);\n\n}}  // namespace opd::native\n",
                        key, key));
    std::string source = banner + fmt::format("#include \"opd/native/{}.h\"\n", key);
    if (code.structured) {
      source +=
          "\n#include <utility>\n\n#include \"common/tensor_iterator.h\"\n"
          "#include \"opd/native/meta_functions.h\"\n";
    }
    source += "\nnamespace opd::native {\n\n";
    if (code.structured) {
      source +=
          "namespace {\n\n// The structured operators' kernels: meta function, impl, "
          "result.\n" +
          code.wrappers + "\n}  // namespace\n\n";
    }
    source += fmt::format("void register_{}_kernels(Library& m) {{\n", key) + code.regs +
              "}\n\n}  // namespace opd::native\n";
    write_if_changed(o.out_dir + "/src/register_" + key + ".cpp", source);
  }
}

}  // namespace opd::gen
