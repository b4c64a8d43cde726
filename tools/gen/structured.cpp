#include "structured.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "emit.h"
#include "opd/error.h"

namespace opd::gen {
namespace {

[[noreturn]] void fail(const std::string& path, const NativeFunction& f, const std::string& what) {
  throw Error(
      fmt::format("{}:{}: {}: {}", path, f.line, f.schema.operator_name().to_string(), what));
}

bool is_backend_key(const std::string& key) {
  return !key.starts_with("Composite") && key != "Meta";
}

// "add" for add.out, "pow_Tensor_Scalar" for pow.Tensor_Scalar_out.
std::string meta_name_of(const FunctionSchema& s) {
  std::string overload = s.overload_name();
  if (overload == "out") {
    overload.clear();
  } else if (overload.ends_with("_out")) {
    overload.resize(overload.size() - 4);
  }
  return overload.empty() ? base_name(s) : base_name(s) + "_" + overload;
}

// The same argument but for its alias annotation (in-place's self is `Tensor(a!) self`).
bool same_argument(const Argument& a, const Argument& b) {
  return a.name() == b.name() && *a.type() == *b.type() && a.N() == b.N() &&
         a.default_value() == b.default_value() && a.kwarg_only() == b.kwarg_only();
}

void check_structured(const NativeFunction& f, const std::string& path) {
  const FunctionSchema& s = f.schema;
  if (s.name().rfind("aten::", 0) != 0) {
    fail(path, f,
         f.structured_inherits == "MetaBase"
             ? "structured kernels are aten's only (their meta functions are plugins/common's, "
               "which plugin_api does not offer); write the out=, functional and in-place kernels"
             : "structured kernels are aten's only (their meta functions build a plugins/common "
               "TensorIterator, which plugin_api does not offer); write the out=, functional and "
               "in-place kernels");
  }
  const auto& args = s.arguments();
  const auto outs =
      std::count_if(args.begin(), args.end(), [](const Argument& a) { return a.is_out(); });
  if (outs != 1 || !args.back().is_out() || s.returns().size() != 1 || !s.returns()[0].is_write() ||
      std::any_of(args.begin(), args.end() - 1, [](const auto& a) { return a.is_write(); })) {
    fail(path, f,
         "'structured: True' is for an out= operator with one out argument, last, which it "
         "returns (\"... *, Tensor(a!) out) -> Tensor(a!)\")");
  }
  if (f.dispatch.empty()) fail(path, f, "'structured: True' needs `dispatch:` naming its impls");
  for (const auto& [key, impl] : f.dispatch) {
    if (!is_backend_key(key)) {
      fail(path, f,
           fmt::format("'structured: True' dispatches to backend impls; {} is not one (Meta is "
                       "generated from the meta function, composites are not structured)",
                       key));
    }
  }
  if (!f.structured_delegate.empty()) {
    fail(path, f, "a structured operator cannot also have a structured_delegate");
  }
}

void check_delegate(const NativeFunction& d, const NativeFunction& out, const std::string& path) {
  const FunctionSchema& s = d.schema;
  const auto& args = s.arguments();
  const auto& outs = out.schema.arguments();
  bool same = args.size() + 1 == outs.size();
  for (size_t i = 0; same && i < args.size(); ++i) same = same_argument(args[i], outs[i]);
  if (!same) {
    fail(path, d,
         fmt::format("its arguments must be those of its structured_delegate {} without `out` "
                     "(alias annotations aside)",
                     impl_name(out.schema)));
  }
  const bool functional =
      s.returns().size() == 1 && !s.returns()[0].is_write() &&
      std::none_of(args.begin(), args.end(), [](const Argument& a) { return a.is_write(); });
  if (!functional && !is_in_place(d)) {
    fail(path, d,
         "a structured_delegate is functional (returns one new Tensor, writes nothing) or "
         "in-place (writes and returns its first argument, and nothing else)");
  }
}

}  // namespace

bool is_in_place(const NativeFunction& f) {
  const auto& args = f.schema.arguments();
  return !args.empty() && args[0].is_write() && f.schema.returns().size() == 1 &&
         f.schema.returns()[0].is_write() &&
         std::none_of(args.begin() + 1, args.end(), [](const Argument& a) { return a.is_write(); });
}

std::vector<StructuredGroup> structured_groups(const std::vector<NativeFunction>& fs,
                                               const std::string& path) {
  std::vector<StructuredGroup> groups;
  std::map<std::string, size_t> by_name;  // impl_name of the out= operator -> group
  for (const NativeFunction& f : fs) {
    if (!f.structured) {
      if (!f.structured_inherits.empty()) {
        fail(path, f, "'structured_inherits' is for a 'structured: True' operator");
      }
      continue;
    }
    check_structured(f, path);
    by_name.emplace(impl_name(f.schema), groups.size());
    groups.push_back({&f, {}, meta_name_of(f.schema), f.structured_inherits != "MetaBase"});
  }
  for (const NativeFunction& f : fs) {
    if (f.structured_delegate.empty()) continue;
    auto it = by_name.find(f.structured_delegate);
    if (it == by_name.end()) {
      fail(path, f,
           fmt::format("structured_delegate '{}' is not a 'structured: True' operator of this "
                       "file",
                       f.structured_delegate));
    }
    StructuredGroup& g = groups[it->second];
    check_delegate(f, *g.out, path);
    g.delegates.push_back(&f);
  }
  return groups;
}

}  // namespace opd::gen
