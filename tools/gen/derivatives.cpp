#include "derivatives.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <map>
#include <set>

#include "emit.h"
#include "opd/error.h"

namespace opd::gen {
namespace {

[[noreturn]] void fail(const std::string& path, const YAML::Mark& mark, const std::string& what) {
  throw Error(fmt::format("{}:{}: {}", path, mark.line + 1, what));
}

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
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot read the file", path));
  } catch (const YAML::Exception& e) {
    fail(path, e.mark, e.msg);
  }
  if (!root.IsSequence()) throw Error(fmt::format("{}:1: expected a list of entries", path));
  // A `name:` without a namespace is in the YAML's: aten's, or the vendor's.
  const std::string ns = namespace_of(fs);
  std::map<std::string, const NativeFunction*> by_name;
  for (const auto& f : fs) by_name[f.schema.operator_name().to_string()] = &f;

  std::vector<DerivativeInfo> out;
  std::map<std::string, int> seen;      // operator -> line
  std::map<std::string, int> per_base;  // CamelCase base -> entries so far
  for (const auto& e : root) {
    if (!e.IsMap() || !e["name"]) fail(path, e.Mark(), "an entry must be a mapping with 'name'");
    const YAML::Node& name_node = e["name"];
    std::string text = name_node.as<std::string>();
    FunctionSchema schema = [&] {
      try {
        return parse_schema(text.find("::") == std::string::npos ? ns + "::" + text : text);
      } catch (const Error& err) {
        fail(path, name_node.Mark(), err.what());
      }
    }();
    const std::string op = schema.operator_name().to_string();
    auto it = by_name.find(op);
    if (it == by_name.end()) {
      fail(path, name_node.Mark(),
           fmt::format("{} is not an operator of native_functions.yaml", op));
    }
    if (it->second->schema.to_string() != schema.to_string()) {
      fail(path, name_node.Mark(),
           fmt::format(
               "the schema of {} differs from native_functions.yaml's:\n  here:   {}\n  there: "
               "{}",
               op, schema.to_string(), it->second->schema.to_string()));
    }
    if (auto [prev, fresh] = seen.emplace(op, name_node.Mark().line + 1); !fresh) {
      fail(path, name_node.Mark(),
           fmt::format("{} already has derivatives at line {}", op, prev->second));
    }
    DerivativeInfo info;
    info.function = it->second;
    info.line = name_node.Mark().line + 1;
    const std::string camel = camel_case(base_name(schema));
    info.node_name = fmt::format("{}Backward{}", camel, per_base[camel]++);
    std::set<std::string> keys;
    for (const auto& kv : e) {
      const std::string key = kv.first.as<std::string>();
      const int line = kv.first.Mark().line + 1;
      if (key == "name" || key == "result") continue;  // `result`: forward mode, not used
      if (key == "output_differentiability") {
        if (!kv.second.IsSequence()) {
          fail(path, kv.first.Mark(), "'output_differentiability' must be a list of booleans");
        }
        for (const auto& b : kv.second) info.output_differentiability.push_back(b.as<bool>());
        if (info.output_differentiability.size() != schema.returns().size()) {
          fail(path, kv.first.Mark(),
               fmt::format("'output_differentiability' has {} flags but {} returns {} values",
                           info.output_differentiability.size(), op, schema.returns().size()));
        }
        continue;
      }
      auto index = schema.argument_index(key);
      if (!index || !is_tensor_like(*schema.arguments()[*index].type())) {
        fail(path, kv.first.Mark(),
             fmt::format("'{}' is not a tensor argument of {} (a formula's key names the input "
                         "it differentiates)",
                         key, op));
      }
      if (!kv.second.IsScalar() || kv.second.Scalar().empty()) {
        fail(path, kv.second.Mark(),
             fmt::format("the formula for '{}' must be a C++ expression", key));
      }
      if (!keys.insert(key).second) {
        fail(path, kv.first.Mark(), fmt::format("'{}' has two formulas", key));
      }
      info.formulas.push_back({key, kv.second.Scalar(), line});
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace opd::gen
