// src/autograd_nodes.h, src/autograd_nodes.cpp, src/autograd_kernels.cpp: one backward node per
// derivatives.yaml entry and one Autograd kernel per operator, compiled into plugins/autograd.
// The generated code calls the plugin's support headers (autograd/node.h, saved_variable.h,
// kernel_support.h, formulas.h), whose header comments say what each piece does; KernelKind
// below lists the kinds of kernel generated.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cpp_types.h"
#include "derivatives.h"
#include "emit.h"
#include "formula_text.h"
#include "opd/error.h"

namespace opd::gen {
namespace {

constexpr const char* kProps[] = {"sizes", "sym_sizes", "strides",     "storage_offset",
                                  "numel", "dim",       "scalar_type", "device"};

std::string prop_type(const std::string& prop) {
  if (prop == "sizes" || prop == "strides") return "std::vector<int64_t>";
  if (prop == "scalar_type") return "ScalarType";
  if (prop == "device") return "Device";
  return "int64_t";
}

bool is_tensor(const Argument& a) { return a.type()->kind() == TypeKind::Tensor; }
bool is_optional_tensor(const Argument& a) {
  return a.type()->kind() == TypeKind::Optional &&
         a.type()->contained()[0]->kind() == TypeKind::Tensor;
}
bool is_tensor_list(const Argument& a) {
  return a.type()->kind() == TypeKind::List && a.type()->contained()[0]->kind() == TypeKind::Tensor;
}
bool is_tensor_like(const Argument& a) {
  return is_tensor(a) || is_optional_tensor(a) || is_tensor_list(a);
}

// The owning type a node keeps for a non-tensor argument, and how apply() views it again.
std::string owned_type(const std::string& cpp) {
  if (cpp == "const Scalar&") return "Scalar";
  if (cpp == "const std::optional<Scalar>&") return "std::optional<Scalar>";
  if (cpp == "IntArrayRef") return "std::vector<int64_t>";
  if (cpp == "OptionalIntArrayRef") return "std::optional<std::vector<int64_t>>";
  if (cpp == "std::string_view") return "std::string";
  if (cpp == "const std::optional<Generator>&") return "std::optional<Generator>";
  if (cpp == "const std::vector<std::optional<Tensor>>&")
    return "std::vector<std::optional<Tensor>>";
  return cpp;
}
std::string view_local(const std::string& cpp, const std::string& name) {
  if (cpp == "IntArrayRef") return fmt::format("    IntArrayRef {} = {}_;\n", name, name);
  if (cpp == "OptionalIntArrayRef") {
    return fmt::format(
        "    OptionalIntArrayRef {0} = {0}_ ? OptionalIntArrayRef(*{0}_) "
        ": std::nullopt;\n",
        name);
  }
  if (cpp == "std::string_view") return fmt::format("    std::string_view {0} = {0}_;\n", name);
  return fmt::format("    const auto& {0} = {0}_;\n", name);
}

// What a formula reads, after rewriting `X.sizes()` into the saved `X_sizes`.
struct Formula {
  std::string input;
  std::string code;
  int line;
  std::set<std::string> tensors;  // tensor arguments used whole
  std::set<std::string> values;   // non-tensor arguments
  std::set<std::string> props;    // "self_sizes", "tensors_args_sizes"
  std::set<size_t> outputs;       // returns used
};

struct Analysis {
  const DerivativeInfo* info;
  std::vector<Formula> formulas;
  std::set<std::string> tensors, values, props;
  std::set<size_t> outputs;
};

std::string output_name(const FunctionSchema& s, size_t i) {
  if (!s.returns()[i].name().empty()) return s.returns()[i].name();
  return s.returns().size() == 1 ? "result" : fmt::format("result{}", i);
}

Analysis analyse(const DerivativeInfo& d, const std::string& path) {
  const FunctionSchema& s = d.function->schema;
  Analysis a{&d, {}, {}, {}, {}, {}};
  for (const auto& f : d.formulas) {
    Formula r{f.input, f.formula, f.line, {}, {}, {}, {}};
    for (const Argument& arg : s.arguments()) {
      if (is_tensor(arg) || is_optional_tensor(arg)) {
        for (const char* p : kProps) {
          std::string call = arg.name() + "." + p + "()";
          std::string saved = arg.name() + "_" + (std::string(p) == "sym_sizes" ? "sizes" : p);
          std::string rewritten = replace_word(r.code, call, saved);
          if (rewritten != r.code) {
            r.code = std::move(rewritten);
            r.props.insert(saved);
          }
        }
      } else if (is_tensor_list(arg)) {
        std::string call = "to_args_sizes(" + arg.name() + ")";
        size_t at;
        while ((at = r.code.find(call)) != std::string::npos) {
          r.code.replace(at, call.size(), arg.name() + "_args_sizes");
          r.props.insert(arg.name() + "_args_sizes");
        }
      }
    }
    for (const std::string& v : variables(r.code)) {
      if (auto i = s.argument_index(v)) {
        const Argument& arg = s.arguments()[*i];
        if (is_tensor_list(arg)) {
          throw Error(
              fmt::format("{}:{}: {}: a formula may use `to_args_sizes({})` but not the "
                          "tensor list itself",
                          path, f.line, s.operator_name().to_string(), v));
        }
        (is_tensor_like(arg) ? r.tensors : r.values).insert(v);
        continue;
      }
      for (size_t o = 0; o < s.returns().size(); ++o) {
        if (v == output_name(s, o) || v == fmt::format("result{}", o)) {
          r.outputs.insert(o);
          if (v != output_name(s, o)) r.code = replace_word(r.code, v, output_name(s, o));
        }
      }
    }
    a.tensors.insert(r.tensors.begin(), r.tensors.end());
    a.values.insert(r.values.begin(), r.values.end());
    a.props.insert(r.props.begin(), r.props.end());
    a.outputs.insert(r.outputs.begin(), r.outputs.end());
    a.formulas.push_back(std::move(r));
  }
  return a;
}

const Argument& argument(const FunctionSchema& s, const std::string& name) {
  return s.arguments()[*s.argument_index(name)];
}

// The differentiable inputs in schema order (the node's next edges follow it).
std::vector<const Argument*> differentiable_inputs(const DerivativeInfo& d) {
  std::vector<const Argument*> out;
  for (const Argument& a : d.function->schema.arguments()) {
    for (const auto& f : d.formulas) {
      if (f.input == a.name()) out.push_back(&a);
    }
  }
  return out;
}

void emit_node(const Analysis& a, std::string& header, std::string& source) {
  const DerivativeInfo& d = *a.info;
  const FunctionSchema& s = d.function->schema;
  const std::string& n = d.node_name;
  std::string members, release;
  for (const std::string& t : a.tensors) {
    members += fmt::format("  SavedVariable {}_;\n", t);
    release += fmt::format("    {}_.reset_data();\n", t);
  }
  for (size_t o : a.outputs) {
    members += fmt::format("  SavedVariable {}_;\n", output_name(s, o));
    release += fmt::format("    {}_.reset_data();\n", output_name(s, o));
  }
  for (const std::string& v : a.values) {
    members += fmt::format("  {} {}_;\n", owned_type(cpp_argument_type(s, argument(s, v))), v);
  }
  for (const std::string& p : a.props) {
    if (p.ends_with("_args_sizes")) {
      members += fmt::format("  std::vector<std::vector<int64_t>> {};\n", p);
      continue;
    }
    for (const char* prop : kProps) {
      if (p.ends_with(std::string("_") + prop)) {
        members += fmt::format("  {} {}{};\n", prop_type(prop), p,
                               std::string(prop) == "device" ? "{DeviceType::CPU}" : "{}");
        break;
      }
    }
  }
  for (const Argument* in : differentiable_inputs(d)) {
    if (is_tensor_list(*in)) members += fmt::format("  size_t {}_size_ = 0;\n", in->name());
  }
  header += fmt::format(
      "// {}:{}\nstruct {} final : public Node {{\n"
      "  variable_list apply(variable_list&& grads) override;\n"
      "  std::string name() const override {{ return \"{}\"; }}\n"
      "  void release_variables() override {{\n{}  }}\n\n{}}};\n\n",
      "manifests/derivatives.yaml", d.line, n, n, release, members);

  std::string body = fmt::format("variable_list {}::apply(variable_list&& grads) {{\n", n);
  body +=
      "  const Tensor& grad = grads[0];\n  (void)grad;\n"
      "  const std::shared_ptr<Node>& node_self = shared();\n  (void)node_self;\n"
      "  size_t next_offset = 0;\n";
  for (const Argument* in : differentiable_inputs(d)) {
    if (is_tensor_list(*in)) {
      body += fmt::format(
          "  const IndexRange {0}_ix{{next_offset, next_offset + {0}_size_}};\n"
          "  next_offset += {0}_size_;\n",
          in->name());
    } else {
      body += fmt::format("  const size_t {}_ix = next_offset++;\n", in->name());
    }
  }
  body += "  variable_list grad_inputs(next_offset);\n";
  for (const Formula& f : a.formulas) {
    std::string locals;
    for (const std::string& t : f.tensors) {
      locals += is_optional_tensor(argument(s, t))
                    ? fmt::format(
                          "    const std::optional<Tensor> {0} = {0}_.unpack_opt(node_self);\n", t)
                    : fmt::format("    const Tensor {0} = {0}_.unpack(node_self);\n", t);
    }
    for (size_t o : f.outputs) {
      locals += fmt::format("    const Tensor {0} = {0}_.unpack(node_self);\n", output_name(s, o));
    }
    for (const std::string& v : f.values)
      locals += view_local(cpp_argument_type(s, argument(s, v)), v);
    for (const std::string& p : f.props)
      locals += fmt::format("    const auto& {0} = this->{0};\n", p);
    const Argument& in = argument(s, f.input);
    if (is_tensor_list(in)) {
      body += fmt::format(
          "  if (should_compute_any_output({0}_ix)) {{\n{1}"
          "#line {2} \"manifests/derivatives.yaml\"\n"
          "    std::vector<Tensor> r = {3};\n"
          "    for (size_t i = 0; i < {0}_ix.size(); ++i) {{\n"
          "      if (should_compute_output({0}_ix.begin + i)) grad_inputs[{0}_ix.begin + i] = "
          "r[i];\n"
          "    }}\n  }}\n",
          f.input, locals, f.line, f.code);
    } else {
      body += fmt::format(
          "  if (should_compute_output({0}_ix)) {{\n{1}"
          "#line {2} \"manifests/derivatives.yaml\"\n"
          "    grad_inputs[{0}_ix] = {3};\n  }}\n",
          f.input, locals, f.line, f.code);
    }
  }
  body += "  return grad_inputs;\n}\n\n";
  source += body;
}

// How an operator's Autograd kernel behaves.
enum class KernelKind {
  Redispatch,            // returns no tensor: calls below autograd, nothing to record
  OutNotDifferentiable,  // an out= variant: throws when an input requires grad, as PyTorch
  NotImplemented,        // no derivatives.yaml entry: throws when an input requires grad
  NonDifferentiable,     // an entry without formulas: calls below autograd, no history
  Formula                // a node built from the entry's formulas records the history
};

// Note [Tensor[] results]
// The generated nodes handle Tensor results only: derivatives.yaml refuses formulas for an
// operator returning Tensor[] (load_derivatives), whose only Autograd kernels are therefore the
// refusal (no entry: NotImplemented) and the plain redispatch (an entry without formulas). Every
// aten operator returning Tensor[] today (split, split_with_sizes, chunk, tensor_split, unbind)
// is CompositeImplicitAutograd over narrow/select, whose formulas give its gradients; PyTorch
// records them as one SplitBackward0/UnbindBackward0 node and refuses in-place changes of their
// outputs (multi-output views), which a list result with its own node would first need.
bool returns_tensor(const FunctionSchema& s) {
  for (const Argument& r : s.returns()) {
    if (r.type()->kind() == TypeKind::Tensor) return true;
  }
  return false;
}
bool returns_tensor_list(const FunctionSchema& s) {
  for (const Argument& r : s.returns()) {
    if (r.type()->kind() == TypeKind::List && r.type()->contained()[0]->kind() == TypeKind::Tensor)
      return true;
  }
  return false;
}

void emit_kernel(const NativeFunction& f, const Analysis* a, std::string& out, std::string& regs,
                 const EmitOptions& o) {
  const FunctionSchema& s = f.schema;
  auto params = cpp_params(s);
  const std::string ret = cpp_return_type(s);
  const std::string name = unique_name(s);
  const bool is_out = std::any_of(s.arguments().begin(), s.arguments().end(),
                                  [](const Argument& x) { return x.is_out(); });
  const bool in_place = !is_out && !s.arguments().empty() && s.arguments()[0].is_write() &&
                        !s.returns().empty() && s.returns()[0].is_write();
  const bool is_view = !s.returns().empty() && s.returns()[0].alias_info() &&
                       !s.returns()[0].is_write() && !s.arguments().empty() &&
                       s.arguments()[0].alias_info() && !s.arguments()[0].is_write();
  std::vector<std::string> tensor_args;
  for (const Argument& x : s.arguments()) {
    if (is_tensor_like(x)) tensor_args.push_back(cpp_name(x.name()));
  }
  KernelKind kind = KernelKind::Formula;
  if (is_out) {
    kind = KernelKind::OutNotDifferentiable;
  } else if (!returns_tensor(s) && !returns_tensor_list(s)) {
    kind = KernelKind::Redispatch;
  } else if (!a) {
    kind = KernelKind::NotImplemented;
  } else if (a->formulas.empty()) {
    kind = KernelKind::NonDifferentiable;
  }
  std::string body =
      fmt::format("// {}:{}  {}\n{} {}(DispatchKeySet ks{}{}) {{\n", o.yaml_display_name, f.line,
                  f.func, ret, name, params.empty() ? "" : ", ", param_list(params, false));
  const std::string redispatch =
      fmt::format("redispatch::{}(ks - kAutogradKeySet{}{})", unique_name(s),
                  params.empty() ? "" : ", ", name_list(params));
  const std::string op_name = "aten::" + impl_name(s);
  std::string mark_view = !is_view ? ""
                          : returns_tensor_list(s)
                              ? "  for (const Tensor& r : result) mark_view(r, self);\n"
                              : "  mark_view(result, self);\n";
  if (kind != KernelKind::Formula) {
    if (kind == KernelKind::OutNotDifferentiable) {
      body +=
          fmt::format("  if (compute_requires_grad({})) throw_out_not_differentiable(\"{}\");\n",
                      fmt::join(tensor_args, ", "), base_name(s));
    } else if (kind == KernelKind::NotImplemented && !tensor_args.empty()) {
      body += fmt::format("  if (compute_requires_grad({})) throw_not_implemented(\"{}\");\n",
                          fmt::join(tensor_args, ", "), op_name);
    }
    if (is_view) {
      body += fmt::format(
          "  {} result = [&] {{\n    AutoDispatchBelowAutograd guard;\n    return {};\n  }}();\n{}"
          "  return result;\n}}\n\n",
          ret, redispatch, mark_view);
    } else {
      body += fmt::format("  AutoDispatchBelowAutograd guard;\n  return {};\n}}\n\n", redispatch);
    }
    out += body;
    regs += fmt::format("#line {} \"{}\"\n  m.impl(\"{}\", OPD_FN({}));\n", f.line,
                        o.yaml_display_name, impl_name(s), name);
    return;
  }
  const DerivativeInfo& d = *a->info;
  std::vector<std::string> diff;
  for (const Argument* in : differentiable_inputs(d)) diff.push_back(cpp_name(in->name()));
  body += fmt::format("  const bool requires_grad = compute_requires_grad({});\n",
                      fmt::join(diff, ", "));
  if (in_place) body += "  check_inplace(self, requires_grad);\n";
  body += fmt::format(
      "  std::shared_ptr<{}> grad_fn;\n  if (requires_grad) {{\n"
      "    grad_fn = make_node<{}>();\n"
      "    grad_fn->set_next_edges(collect_next_edges({}));\n",
      d.node_name, d.node_name, fmt::join(diff, ", "));
  for (const Argument* in : differentiable_inputs(d)) {
    if (is_tensor_list(*in))
      body += fmt::format("    grad_fn->{0}_size_ = {0}.size();\n", in->name());
  }
  for (const std::string& t : a->tensors) {
    std::string value = is_optional_tensor(argument(s, t)) ? t + ".value_or(Tensor())" : t;
    if (in_place && t == s.arguments()[0].name()) value = "clone_for_saving(" + t + ")";
    body += fmt::format("    grad_fn->{}_ = SavedVariable({}, false);\n", t, value);
  }
  for (const std::string& v : a->values)
    body += fmt::format("    grad_fn->{0}_ = owned({0});\n", v);
  for (const std::string& p : a->props) {
    if (p.ends_with("_args_sizes")) {
      std::string arg = p.substr(0, p.size() - 11);
      body += fmt::format("    grad_fn->{} = args_sizes({});\n", p, arg);
      continue;
    }
    for (const char* prop : kProps) {
      std::string suffix = std::string("_") + prop;
      if (p.ends_with(suffix)) {
        std::string arg = p.substr(0, p.size() - suffix.size());
        bool opt = is_optional_tensor(argument(s, arg));
        std::string read = fmt::format("{}{}{}()", arg, opt ? "->" : ".", prop);
        if (std::string(prop) == "sizes" || std::string(prop) == "strides") read += ".vec()";
        body += fmt::format("    grad_fn->{} = {};\n", p, read);
        break;
      }
    }
  }
  body += "  }\n";
  if (in_place) {
    body += fmt::format("  {{\n    AutoDispatchBelowAutograd guard;\n    {};\n  }}\n", redispatch);
    // An in-place view operator changes self's geometry, not its data (rebase_view_history).
    const bool inplace_view =
        std::find(f.tags.begin(), f.tags.end(), "inplace_view") != f.tags.end();
    body += fmt::format("  if (grad_fn) {{\n    {}(self, grad_fn);\n",
                        inplace_view ? "rebase_view_history" : "rebase_history");
    for (size_t i : a->outputs) {
      body += fmt::format("    grad_fn->{}_ = SavedVariable(self, true);\n", output_name(s, i));
    }
    body += "  }\n  return self;\n}\n\n";
  } else {
    body += fmt::format(
        "  {} result = [&] {{\n    AutoDispatchBelowAutograd guard;\n    return {};\n  }}();\n",
        ret, redispatch);
    const size_t n = s.returns().size();
    auto out_expr = [&](size_t i) {
      return n == 1 ? std::string("result") : fmt::format("std::get<{}>(result)", i);
    };
    body += "  if (grad_fn) {\n";
    for (size_t i = 0; i < n; ++i) {
      if (s.returns()[i].type()->kind() != TypeKind::Tensor) continue;
      bool differentiable = d.output_differentiability.empty() || d.output_differentiability[i];
      body += fmt::format("    set_history({}, grad_fn, {});\n", out_expr(i),
                          differentiable ? "true" : "false");
    }
    for (size_t i : a->outputs) {
      body += fmt::format("    grad_fn->{}_ = SavedVariable({}, true);\n", output_name(s, i),
                          out_expr(i));
    }
    body += "  }\n" + mark_view + "  return result;\n}\n\n";
  }
  out += body;
  regs += fmt::format("#line {} \"{}\"\n  m.impl(\"{}\", OPD_FN({}));\n", f.line,
                      o.yaml_display_name, impl_name(s), name);
}

}  // namespace

void emit_autograd(const std::vector<NativeFunction>& fs, const std::vector<DerivativeInfo>& ds,
                   const EmitOptions& o, const std::string& derivatives_path) {
  std::map<std::string, Analysis> by_op;
  std::string node_decls, node_defs;
  for (const DerivativeInfo& d : ds) {
    Analysis a = analyse(d, derivatives_path);
    if (!a.formulas.empty()) emit_node(a, node_decls, node_defs);
    by_op.emplace(d.function->schema.operator_name().to_string(), std::move(a));
  }
  std::string kernels, regs;
  for (const NativeFunction& f : fs) {
    const FunctionSchema& s = f.schema;
    bool composite_implicit = false;
    for (const auto& [key, kernel] : f.dispatch)
      composite_implicit |= key == "CompositeImplicitAutograd";
    bool has_tensor = std::any_of(s.arguments().begin(), s.arguments().end(),
                                  [](const Argument& x) { return is_tensor_like(x); });
    auto it = by_op.find(s.operator_name().to_string());
    // An in-place operator without its own entry uses its out-of-place form's.
    if (it == by_op.end() && base_name(s).ends_with("_") && !s.arguments().empty() &&
        s.arguments()[0].is_write()) {
      std::string functional = s.name().substr(0, s.name().size() - 1);
      if (!s.overload_name().empty()) functional += "." + s.overload_name();
      it = by_op.find(functional);
    }
    const Analysis* a = it == by_op.end() ? nullptr : &it->second;
    // Composite implicit operators decompose into differentiable ones; factories never reach an
    // autograd key; operators without dispatch nor derivatives are the autograd plugin's own.
    if (composite_implicit || !has_tensor ||
        (f.dispatch.empty() && f.structured_delegate.empty() && !a))
      continue;
    emit_kernel(f, a, kernels, regs, o);
  }
  const std::string banner = fmt::format("// Generated by opd-gen from {} and {}. Do not edit.\n",
                                         o.yaml_display_name, "manifests/derivatives.yaml");
  write_if_changed(o.out_dir + "/src/autograd_nodes.h",
                   banner +
                       "// The backward nodes, one per derivatives.yaml entry with formulas.\n"
                       "#pragma once\n\n#include \"autograd/generated_support.h\"\n\n"
                       "namespace opd::autograd::generated {\n\n" +
                       node_decls + "}  // namespace opd::autograd::generated\n");
  write_if_changed(o.out_dir + "/src/autograd_nodes.cpp",
                   banner +
                       "#include \"autograd_nodes.h\"\n\nnamespace opd::autograd::generated {\n\n" +
                       node_defs + "}  // namespace opd::autograd::generated\n");
  write_if_changed(
      o.out_dir + "/src/autograd_kernels.cpp",
      banner +
          "#include \"autograd_nodes.h\"\n\nnamespace opd::autograd::generated {\nnamespace {\n\n" +
          kernels +
          "}  // namespace\n\n// Every kernel above, for OPD_LIBRARY_IMPL(aten, Autograd, m).\n"
          "void register_autograd_kernels(Library& m) {\n" +
          regs + "}\n\n}  // namespace opd::autograd::generated\n");
}

}  // namespace opd::gen
