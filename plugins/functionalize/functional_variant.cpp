#include "functionalize/functional_variant.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>

namespace opd::functionalize {
namespace {

// Note [Functional variants]
// PyTorch's codegen pairs every mutating operator with its functional overload ahead of time,
// by FunctionSchema.signature(): the name without the in-place `_`, the arguments without the
// out= outputs, alias annotations, defaults and the overload name. This plugin pairs them on
// first use, the same way, over the schemas the dispatcher prints (OperatorHandle's
// schema_string()): an in-place operator's functional overload has its overload name and its
// name without the `_` (or with `_functional` in its place: normal_, normal_functional); an out=
// operator's is looked for among the overloads of its name, which the build lists from
// manifests/native_functions.yaml (operator_names.cmake). Another namespace's operators have no
// list: only `name_.overload` -> `name.overload` and `name.out` -> `name` are tried.
constexpr const char* kAtenOperators[] = {
#include "functionalize_operator_names.inc"
};

struct Argument {
  std::string key;  // "<type without alias annotation> <name>"
  bool written = false;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The arguments of a canonical schema text, "ns::name.overload(Tensor(a!) self, ...) -> ...".
std::vector<Argument> parse_arguments(std::string_view schema) {
  const size_t open = schema.find('(');
  OPD_INTERNAL_ASSERT(open != std::string_view::npos, "no arguments in {}", schema);
  std::vector<std::string_view> pieces;
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open + 1; i < schema.size(); ++i) {
    const char c = schema[i];
    if (c == '(' || c == '[') {
      ++depth;
    } else if ((c == ')' || c == ']') && depth > 0) {
      --depth;
    } else if (c == ')' || (c == ',' && depth == 0)) {
      pieces.push_back(trim(schema.substr(start, i - start)));
      start = i + 1;
      if (c == ')') break;
    }
  }
  std::vector<Argument> args;
  for (std::string_view p : pieces) {
    if (p.empty() || p == "*") continue;
    p = trim(p.substr(0, p.find('=')));
    const size_t space = p.rfind(' ');
    std::string_view type = p.substr(0, space);
    Argument a;
    a.written = type.find('!') != std::string_view::npos;
    for (size_t i = 0, d = 0; i < type.size(); ++i) {
      if (type[i] == '(') ++d;
      if (d == 0) a.key += type[i];
      if (type[i] == ')') --d;
    }
    a.key += ' ';
    a.key += p.substr(space + 1);
    args.push_back(std::move(a));
  }
  return args;
}

std::vector<std::string> keys_of(const std::vector<Argument>& args, bool drop_written) {
  std::vector<std::string> keys;
  for (const Argument& a : args) {
    if (!(drop_written && a.written)) keys.push_back(a.key);
  }
  return keys;
}

// The overload names of `ns::name` that might be functional overloads.
std::vector<std::string> candidate_overloads(std::string_view ns, std::string_view name) {
  std::vector<std::string> out;
  if (ns != "aten") return {""};
  for (std::string_view full : kAtenOperators) {
    const size_t dot = full.find('.');
    if (full.substr(0, dot) != name) continue;
    out.emplace_back(dot == std::string_view::npos ? std::string_view() : full.substr(dot + 1));
  }
  return out;
}

std::unique_ptr<FunctionalVariant> find_variant(const OperatorHandle& op) {
  const OperatorName& on = op.operator_name();
  const std::string_view full = on.name;
  const size_t colons = full.find("::");
  const std::string_view ns = full.substr(0, colons);
  std::string_view name = full.substr(colons + 2);
  const std::vector<Argument> args = parse_arguments(op.schema_string());
  const bool in_place = name.size() > 1 && name.back() == '_' && !name.starts_with("__");
  if (in_place) name.remove_suffix(1);
  const std::vector<std::string> wanted = keys_of(args, /*drop_written=*/!in_place);
  // (name, overload) pairs to try. normal_'s functional form is named normal_functional.
  std::vector<std::pair<std::string, std::string>> candidates;
  if (in_place) {
    candidates.emplace_back(fmt::format("{}::{}", ns, name), on.overload_name);
    candidates.emplace_back(fmt::format("{}::{}_functional", ns, name), on.overload_name);
  } else {
    for (std::string& overload : candidate_overloads(ns, name)) {
      candidates.emplace_back(fmt::format("{}::{}", ns, name), std::move(overload));
    }
  }
  for (const auto& [functional_name, overload] : candidates) {
    std::optional<OperatorHandle> f = find_operator(functional_name, overload);
    if (!f) continue;
    const std::vector<Argument> fargs = parse_arguments(f->schema_string());
    bool writes = false;
    for (const Argument& a : fargs) writes = writes || a.written;
    if (writes || keys_of(fargs, false) != wanted) continue;
    auto v = std::make_unique<FunctionalVariant>();
    v->name = functional_name;
    v->overload = overload;
    for (size_t i = 0; i < args.size(); ++i) {
      v->keep_argument.push_back(in_place || !args[i].written);
      if (args[i].written) v->written_arguments.push_back(i);
    }
    return v;
  }
  // PyTorch's zero_ pairs with aten::zero, which torchgen generates and our manifest lacks;
  // fill_(self, 0) is what zero_ computes.
  if (on.name == "aten::zero_" && on.overload_name.empty() &&
      find_operator("aten::fill", "Scalar")) {
    auto v = std::make_unique<FunctionalVariant>();
    v->name = "aten::fill";
    v->overload = "Scalar";
    v->keep_argument = {true};
    v->written_arguments = {0};
    v->extra_arguments = {IValue(int64_t{0})};
    return v;
  }
  return nullptr;
}

}  // namespace

const FunctionalVariant& functional_variant_of(const OperatorHandle& op) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<FunctionalVariant>> cache;
  const std::string key = op.operator_name().to_string();
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, find_variant(op)).first;
  if (it->second) return *it->second;
  const OperatorName& on = op.operator_name();
  throw Error(fmt::format(
      "Found a custom (non-ATen) operator that either mutates or its inputs: {}.{}. Getting "
      "these operators to work with functionalization requires some extra work. For mutable ops "
      "you need to register a corresponding out-of-place variant of the op, and you also need to "
      "register a Functionalization kernel that performs some boilerplate, telling "
      "functionalization to map from the mutable op to the out-of-place op. See a more complete "
      "example of how to do this at "
      "https://gist.github.com/bdhirsh/7dadbf6296f8f7d1abcf4c482f438aaa.",
      on.name, on.overload_name));
}

}  // namespace opd::functionalize
