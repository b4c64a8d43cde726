#include "derivatives.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>

#include "emit.h"
#include "formula_text.h"
#include "opd/error.h"
#include "yaml_read.h"

namespace opd::gen {
namespace {

bool is_tensor_like(const Type& t) {
  if (t.kind() == TypeKind::Tensor) return true;
  if (t.kind() == TypeKind::Optional || t.kind() == TypeKind::List) {
    return t.contained()[0]->kind() == TypeKind::Tensor;
  }
  return false;
}

// PyTorch's node names: the base name without leading '_' and trailing "_forward", in
// CamelCase, then "Backward" and the entry's index among entries of that base name.
std::string camel_case(std::string base) {
  while (!base.empty() && base.front() == '_') base.erase(0, 1);
  if (base.ends_with("_forward")) base.resize(base.size() - 8);
  if (base.ends_with("_")) base.pop_back();
  std::string out;
  bool upper = true;
  for (char c : base) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

}  // namespace

std::vector<DerivativeInfo> load_derivatives(const std::string& path,
                                             const std::vector<NativeFunction>& fs) {
  const YamlFile file(path);
  if (!file.root().IsSequence()) file.fail(1, "expected a list of entries");
  // A `name:` without a namespace is in the YAML's: aten's, or the vendor's.
  const std::string ns = namespace_of(fs);
  std::map<std::string, const NativeFunction*> by_name;
  for (const auto& f : fs) by_name[f.schema.operator_name().to_string()] = &f;

  std::vector<DerivativeInfo> out;
  std::map<std::string, int> seen;      // operator -> line
  std::map<std::string, int> per_base;  // CamelCase base -> entries so far
  for (const YAML::Node& e : file.sequence(file.root(), "the file")) {
    if (!e.IsMap()) file.fail(e, "an entry must be a mapping with 'name'");
    const std::vector<YamlField> fields = file.mapping(e, "an entry");
    const YamlField* name_field = nullptr;
    for (const YamlField& f : fields) {
      if (f.name == "name") name_field = &f;
    }
    if (!name_field) file.fail(e, "an entry must be a mapping with 'name'");
    const int name_line = name_field->line;
    std::string text = file.scalar(*name_field, "'name'");
    FunctionSchema schema = [&] {
      try {
        return parse_schema(text.find("::") == std::string::npos ? ns + "::" + text : text);
      } catch (const Error& err) {
        file.fail(name_line, err.what());
      }
    }();
    const std::string op = schema.operator_name().to_string();
    auto it = by_name.find(op);
    if (it == by_name.end()) {
      file.fail(name_line, fmt::format("{} is not an operator of native_functions.yaml", op));
    }
    if (it->second->schema.to_string() != schema.to_string()) {
      file.fail(name_line,
                fmt::format("the schema of {} differs from native_functions.yaml's:\n  here:   "
                            "{}\n  there: {}",
                            op, schema.to_string(), it->second->schema.to_string()));
    }
    if (auto [prev, fresh] = seen.emplace(op, name_line); !fresh) {
      file.fail(name_line, fmt::format("{} already has derivatives at line {}", op, prev->second));
    }
    DerivativeInfo info;
    info.function = it->second;
    info.line = name_line;
    const std::string camel = camel_case(base_name(schema));
    info.node_name = fmt::format("{}Backward{}", camel, per_base[camel]++);
    for (const YamlField& kv : fields) {
      const std::string& key = kv.name;
      if (key == "name" || key == "result") continue;  // `result`: forward mode, not used
      if (key == "output_differentiability") {
        for (const YAML::Node& b : file.sequence(kv, "'output_differentiability'")) {
          info.output_differentiability.push_back(
              file.boolean(b, "a flag of 'output_differentiability'"));
        }
        if (info.output_differentiability.size() != schema.returns().size()) {
          file.fail(kv.name_node,
                    fmt::format("'output_differentiability' has {} flags but {} returns {} values",
                                info.output_differentiability.size(), op, schema.returns().size()));
        }
        continue;
      }
      auto index = schema.argument_index(key);
      if (!index || !is_tensor_like(*schema.arguments()[*index].type())) {
        file.fail(kv.name_node,
                  fmt::format("'{}' is not a tensor argument of {} (a formula's key names the "
                              "input it differentiates)",
                              key, op));
      }
      const std::string formula = file.scalar(kv, fmt::format("the formula for '{}'", key));
      // See Note [Formula checks] in formula_text.h.
      if (std::string problem = formula_problem(formula); !problem.empty()) {
        file.fail(kv.line,
                  fmt::format("the formula for '{}' is not one C++ expression: {}", key, problem));
      }
      // An argument named by a keyword ("int", which cpp_name writes int_) cannot be a
      // formula's variable: the generated code declares the variables by their schema names.
      for (const std::string& v : variables(formula)) {
        if (schema.argument_index(v) && is_cpp_keyword(v)) {
          file.fail(kv.line, fmt::format("the formula for '{}' uses argument '{}', whose name is "
                                         "a C++ keyword",
                                         key, v));
        }
      }
      info.formulas.push_back({key, formula, YamlFile::line(kv.name_node)});
    }
    // Note [Tensor[] results]: PyTorch's `grads` over a list result has no counterpart here.
    for (const Argument& r : schema.returns()) {
      if (!info.formulas.empty() && r.type()->kind() == TypeKind::List) {
        file.fail(name_line,
                  fmt::format("{} returns {}: formulas for a list result are not supported (write "
                              "the operator CompositeImplicitAutograd over differentiable ones, "
                              "as split and unbind are)",
                              op, r.type()->str()));
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace opd::gen
