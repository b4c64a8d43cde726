#include "opd/bind/binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "opd/bind/tensor_values.h"
#include "opd/error.h"
#include "opd/layout.h"
#include "opd/operator_entry.h"

namespace opd::bind {
namespace {

const Type& unwrap_optional(const Type& t) {
  return t.kind() == TypeKind::Optional ? *t.contained()[0] : t;
}

bool mentions_tensor(const Type& t) {
  if (t.kind() == TypeKind::Tensor) return true;
  return std::any_of(t.contained().begin(), t.contained().end(),
                     [](const TypePtr& c) { return mentions_tensor(*c); });
}

// Factory functions take no tensor: there, --device and --dtype stand in for device= / dtype=.
bool is_factory(const FunctionSchema& s) {
  return std::none_of(s.arguments().begin(), s.arguments().end(),
                      [](const Argument& a) { return mentions_tensor(*a.type()); });
}

// The elements of any list-like value (literal lists are generic; results may be typed).
std::optional<std::vector<IValue>> list_items(const IValue& v) {
  auto wrap = [](const auto& xs) {
    std::vector<IValue> out;
    out.reserve(xs.size());
    for (const auto& x : xs) out.emplace_back(x);
    return out;
  };
  if (v.is_generic_list()) return v.to_generic_list();
  if (v.is_tuple()) return v.to_tuple();
  if (v.is_int_list()) return wrap(v.to_int_list());
  if (v.is_double_list()) return wrap(v.to_double_list());
  if (v.is_tensor_list()) return wrap(v.to_tensor_list());
  if (v.is_optional_tensor_list()) return wrap(v.to_optional_tensor_list());
  if (v.is_bool_list()) {
    std::vector<IValue> out;
    for (bool b : v.to_bool_list()) out.emplace_back(b);
    return out;
  }
  return std::nullopt;
}

// The boxed form of a list of `element` (see matches() in core/src/dispatch/boxed_call.cpp).
IValue make_list(const Type& element, const std::vector<IValue>& items) {
  auto collect = [&](auto get) {
    std::vector<std::remove_cvref_t<decltype(get(items[0]))>> out;
    out.reserve(items.size());
    for (const IValue& x : items) out.push_back(get(x));
    return out;
  };
  switch (element.kind()) {
    case TypeKind::Int:
    case TypeKind::SymInt:
      return IValue(collect([](const IValue& x) { return x.to_int(); }));
    case TypeKind::Float:
      return IValue(collect([](const IValue& x) { return x.to_double(); }));
    case TypeKind::Bool: {
      std::vector<bool> out;
      for (const IValue& x : items) out.push_back(x.to_bool());
      return IValue(std::move(out));
    }
    case TypeKind::Tensor:
      return IValue(collect([](const IValue& x) { return x.to_tensor(); }));
    case TypeKind::Optional:
      if (element.contained()[0]->kind() == TypeKind::Tensor) {
        return IValue(collect([](const IValue& x) -> std::optional<Tensor> {
          if (x.is_none()) return std::nullopt;
          return x.to_tensor();
        }));
      }
      [[fallthrough]];
    default:
      return IValue::make_generic_list(items);
  }
}

std::optional<IValue> convert_list(const IValue& v, const Type& element, std::optional<int64_t> N) {
  bool ints = element.kind() == TypeKind::Int || element.kind() == TypeKind::SymInt;
  if (ints && N && *N > 0 && v.is_int()) {
    return IValue(std::vector<int64_t>(static_cast<size_t>(*N), v.to_int()));
  }
  auto items = list_items(v);
  if (!items) return std::nullopt;
  std::vector<IValue> converted;
  converted.reserve(items->size());
  for (const IValue& x : *items) {
    auto c = convert_argument(x, element, std::nullopt);
    if (!c) return std::nullopt;
    converted.push_back(std::move(*c));
  }
  return make_list(element, converted);
}

// Note [Overload order]
// PyTorch's gen_python_functions.py (sort_overloads) orders a name's overloads: first by
// signature text, then topologically so that an overload comes after those that take a Tensor
// where it takes a Scalar (add.Tensor before add.Scalar), int/int? before int[], and anything
// before Tensor[] and Dimname overloads. The parser then takes the first overload that binds.
// Output (out=) arguments do not take part in the comparison.
bool is_arg_smaller(const Type& t1, const Type& t2) {
  std::string s1 = t1.str(), s2 = t2.str();
  return (s1 == "Scalar" && s2 == "Tensor") || (s1 == "Scalar?" && s2 == "Tensor?") ||
         (s1.find("Dimname") != std::string::npos && s2.find("Dimname") == std::string::npos) ||
         (s1 == "int[]" && (s2 == "int" || s2 == "int?")) ||
         (s1 == "Tensor[]" && s2.find("[]") != std::string::npos) ||
         (s1 == "SymInt[]" && s2 == "int[]");
}

std::vector<const Argument*> non_out_arguments(const FunctionSchema& s) {
  std::vector<const Argument*> out;
  for (const Argument& a : s.arguments()) {
    if (!a.is_out()) out.push_back(&a);
  }
  return out;
}

bool is_smaller(const FunctionSchema& s1, const FunctionSchema& s2) {
  auto a1 = non_out_arguments(s1), a2 = non_out_arguments(s2);
  if (a1.size() != a2.size()) return false;
  bool equal = true, smaller_or_equal = true;
  for (size_t i = 0; i < a1.size(); ++i) {
    const Type &t1 = *a1[i]->type(), &t2 = *a2[i]->type();
    if (!(t1 == t2)) equal = false;
    if (!(t1.str() == t2.str() || is_arg_smaller(t1, t2))) smaller_or_equal = false;
  }
  return smaller_or_equal && !equal;
}

std::vector<OperatorHandle> sort_overloads(std::vector<OperatorHandle> ops) {
  std::sort(ops.begin(), ops.end(), [](const OperatorHandle& a, const OperatorHandle& b) {
    return a.schema().to_string() < b.schema().to_string();
  });
  const size_t n = ops.size();
  std::map<size_t, std::set<size_t>> larger_than;  // i -> the overloads that must come before i
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (is_smaller(ops[i].schema(), ops[j].schema())) larger_than[i].insert(j);
    }
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    if (!larger_than.count(i)) order.push_back(i);
  }
  for (size_t idx = 0; idx < order.size(); ++idx) {
    size_t done = order[idx];
    for (auto it = larger_than.begin(); it != larger_than.end();) {
      it->second.erase(done);
      if (it->second.empty()) {
        order.push_back(it->first);
        it = larger_than.erase(it);
      } else {
        ++it;
      }
    }
  }
  OPD_INTERNAL_ASSERT(order.size() == n, "overload order is cyclic");
  std::vector<OperatorHandle> sorted;
  for (size_t i : order) sorted.push_back(ops[i]);
  return sorted;
}

std::string describe_arguments(const CallArgs& args) {
  std::string out;
  for (const IValue& v : args.positional) out += (out.empty() ? "" : ", ") + python_type_name(v);
  for (const auto& [k, v] : args.keywords) {
    out += (out.empty() ? "" : ", ") + k + "=" + python_type_name(v);
  }
  return out;
}

int64_t reduction_value(const std::string& name) {
  // at::Reduction::Reduction.
  if (name == "None") return 0;
  if (name == "Mean") return 1;
  if (name == "Sum") return 2;
  throw ValueError(fmt::format("opd eval: unknown default value '{}'", name));
}

}  // namespace

std::string python_type_name(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return "NoneType";
    case IValue::Tag::ScalarType:
      return "torch.dtype";
    case IValue::Tag::Layout:
      return "torch.layout";
    case IValue::Tag::MemoryFormat:
      return "torch.memory_format";
    case IValue::Tag::Device:
      return "torch.device";
    case IValue::Tag::Capsule:
      if (v.is_generator()) return "torch.Generator";
      break;
    default:
      break;
  }
  if (auto items = list_items(v)) {
    std::string inner;
    for (const IValue& x : *items) inner += (inner.empty() ? "" : ", ") + python_type_name(x);
    return v.is_tuple() ? "tuple of (" + inner + ")" : "list of [" + inner + "]";
  }
  return v.tag_name();
}

std::optional<IValue> convert_argument(const IValue& v, const Type& type, std::optional<int64_t> N,
                                       bool numbers_as_tensors) {
  switch (type.kind()) {
    case TypeKind::Tensor:
      if (v.is_tensor()) return v;
      if (numbers_as_tensors && v.is_scalar()) return IValue(wrapped_number(v.to_scalar()));
      return std::nullopt;
    case TypeKind::Optional:
      if (v.is_none()) return IValue();
      return convert_argument(v, *type.contained()[0], N, numbers_as_tensors);
    case TypeKind::Int:
    case TypeKind::SymInt:
    case TypeKind::DeviceIndex:
      return v.is_int() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Float:
      if (v.is_int()) return IValue(static_cast<double>(v.to_int()));
      return v.is_double() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Complex:
      if (v.is_int()) return IValue(std::complex<double>(static_cast<double>(v.to_int()), 0));
      if (v.is_double()) return IValue(std::complex<double>(v.to_double(), 0));
      return v.is_complex_double() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Bool:
      return v.is_bool() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Scalar:
      return v.is_scalar() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Str:
    case TypeKind::Dimname:
      return v.is_string() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::ScalarType:
      return v.is_scalar_type() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Layout:
      return v.is_layout() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::MemoryFormat:
      return v.is_memory_format() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Device:
      if (v.is_device()) return v;
      if (v.is_string()) {
        try {
          return IValue(Device(v.to_string_view()));
        } catch (const Error&) {
          return std::nullopt;
        }
      }
      return std::nullopt;
    case TypeKind::List:
      return convert_list(v, *type.contained()[0], N);
    case TypeKind::None:
      return v.is_none() ? std::optional<IValue>(v) : std::nullopt;
    case TypeKind::Any:
      return v;
    case TypeKind::Generator:  // an opdispatch.Generator (Note [Generator objects])
      return v.is_generator() ? std::optional<IValue>(v) : std::nullopt;
    default:
      return std::nullopt;  // Stream, Dict...: no literal spells them
  }
}

IValue default_argument(const DefaultValue& d, const Type& type) {
  const Type& t = unwrap_optional(type);
  switch (d.kind()) {
    case DefaultValue::Kind::None:
      return IValue();
    case DefaultValue::Kind::Bool:
      return IValue(d.as_bool());
    case DefaultValue::Kind::Int:
      if (t.kind() == TypeKind::Float) return IValue(static_cast<double>(d.as_int()));
      if (t.kind() == TypeKind::Complex) {
        return IValue(std::complex<double>(static_cast<double>(d.as_int()), 0));
      }
      return IValue(d.as_int());
    case DefaultValue::Kind::Float:
      if (t.kind() == TypeKind::Complex) return IValue(std::complex<double>(d.as_float(), 0));
      return IValue(d.as_float());
    case DefaultValue::Kind::Complex:
      return IValue(d.as_complex());
    case DefaultValue::Kind::String:
      if (t.kind() == TypeKind::Device) return IValue(Device(d.as_string()));
      return IValue(d.as_string());
    case DefaultValue::Kind::Identifier:
      switch (t.kind()) {
        case TypeKind::ScalarType:
          return IValue(parse_scalar_type(d.as_string()));
        case TypeKind::Layout:
          return IValue(parse_layout(d.as_string()));
        case TypeKind::MemoryFormat:
          return IValue(parse_memory_format(d.as_string()));
        default:
          return IValue(reduction_value(d.as_string()));
      }
    case DefaultValue::Kind::List: {
      OPD_CHECK(t.kind() == TypeKind::List, "opd eval: a list default for an argument of type {}",
                type.str());
      const Type& element = *t.contained()[0];
      std::vector<IValue> items;
      for (const DefaultValue& x : d.as_list()) items.push_back(default_argument(x, element));
      return make_list(element, items);
    }
  }
  return IValue();
}

namespace {

// Which arguments a call gave, without the heap for an ordinary schema: every call from Python
// binds (Note [Tensor methods] in python/src/ops.cpp says what a small call costs).
class GivenArguments {
 public:
  explicit GivenArguments(size_t n) {
    if (n > kInline) heap_.resize(n);
  }
  bool operator[](size_t i) const { return heap_.empty() ? inline_[i] : heap_[i]; }
  void set(size_t i) {
    if (heap_.empty()) {
      inline_[i] = true;
    } else {
      heap_[i] = true;
    }
  }

 private:
  static constexpr size_t kInline = 64;
  std::array<bool, kInline> inline_{};
  std::vector<bool> heap_;
};

}  // namespace

// Note [Numbers as tensors]
// torch's Python argument parser takes a Python number (bool, int, float, complex) for a Tensor
// parameter of a few functions only (should_allow_numbers_as_tensors in python_arg_parser.cpp):
// the arithmetic ones and their aliases, in-place and out= forms included, and the conversions.
// The number becomes a wrapped number (a 0-dim CPU tensor that promotes as a scalar), so
// torch.add(x, 2, out=o) and torch.add(2, x) work while torch.sin(2) is a TypeError. torch binds
// its Python-visible overloads in Note [Overload order]'s order with numbers allowed; here a
// number is tried against every overload as itself first, and only when none binds as a tensor,
// so that an overload taking a Scalar where another takes a Tensor wins for a number
// (x.add(2) is add.Scalar; add(x, 2, out=o), which has no Scalar overload, is add.out with a
// wrapped number). The values and dtypes are the same either way: a wrapped number promotes as
// the Scalar would.
bool allows_numbers_as_tensors(const FunctionSchema& schema) {
  static const std::set<std::string, std::less<>> allowed = {
      "add",      "add_",         "div",           "div_",         "divide", "divide_",
      "mul",      "mul_",         "multiply",      "multiply_",    "sub",    "sub_",
      "subtract", "subtract_",    "true_divide",   "true_divide_", "to",     "_to_copy",
      "copy_",    "floor_divide", "floor_divide_", "_conj"};
  std::string_view name = schema.name();
  if (size_t sep = name.find("::"); sep != std::string_view::npos) {
    if (name.substr(0, sep) != "aten") return false;
    name.remove_prefix(sep + 2);
  }
  return allowed.find(name) != allowed.end();
}

std::optional<Stack> try_bind(const FunctionSchema& schema, const CallArgs& args,
                              const FactoryDefaults& defaults, std::string* why,
                              bool numbers_as_tensors) {
  const auto& params = schema.arguments();
  // The arguments are bound in place, in the stack the call takes.
  Stack stack(params.size());
  GivenArguments bound(params.size());
  size_t max_positional = 0;
  while (max_positional < params.size() && !params[max_positional].kwarg_only()) ++max_positional;

  // The message is only made when binding fails and `why` asks for it: the first pass over the
  // overloads does not (x.mul(2) fails mul.Tensor before it binds mul.Scalar).
  auto fail = [&](const auto& message) -> std::optional<Stack> {
    if (why != nullptr) *why = message();
    return std::nullopt;
  };
  // `position`: 1-based for a positional argument, 0 for a keyword.
  auto bind = [&](size_t i, const IValue& v, size_t position) -> bool {
    auto c = convert_argument(v, *params[i].type(), params[i].N(), numbers_as_tensors);
    if (!c) {
      if (why == nullptr) return false;
      *why = fmt::format("argument '{}'{} must be {}, not {}", params[i].name(),
                         position ? fmt::format(" (position {})", position) : std::string(),
                         // torch's name for a Generator? (Note [Generator objects])
                         unwrap_optional(*params[i].type()).kind() == TypeKind::Generator
                             ? "torch.Generator"
                             : params[i].type()->str(),
                         python_type_name(v));
      return false;
    }
    stack[i] = std::move(*c);
    bound.set(i);
    return true;
  };

  // ones(2, 3) means ones([2, 3]): a lone positional int list takes varargs, as in PyTorch;
  // so does the one after self in a method call (x.view(2, 3)).
  const std::vector<IValue>* given = &args.positional;
  std::vector<IValue> varargs;
  const size_t first = args.self_bound ? 1 : 0;
  if (max_positional == first + 1 && given->size() > first && (*given)[first].is_int()) {
    const Type& t = *params[first].type();
    if (t.kind() == TypeKind::List && (t.contained()[0]->kind() == TypeKind::Int ||
                                       t.contained()[0]->kind() == TypeKind::SymInt)) {
      varargs.assign(given->begin(), given->begin() + static_cast<std::ptrdiff_t>(first));
      varargs.push_back(IValue::make_generic_list(
          std::vector<IValue>(given->begin() + static_cast<std::ptrdiff_t>(first), given->end())));
      given = &varargs;
    }
  }
  const std::vector<IValue>& positional = *given;
  if (positional.size() > max_positional) {
    return fail([&] {
      return fmt::format("takes {} positional argument{} but {} {} given", max_positional,
                         max_positional == 1 ? "" : "s", positional.size(),
                         positional.size() == 1 ? "was" : "were");
    });
  }
  for (size_t i = 0; i < positional.size(); ++i) {
    if (!bind(i, positional[i], i + 1)) return std::nullopt;
  }
  for (const auto& [name, value] : args.keywords) {
    auto index = schema.argument_index(name);
    if (!index) {
      return fail([&] { return fmt::format("got an unexpected keyword argument '{}'", name); });
    }
    if (bound[*index]) {
      return fail([&] { return fmt::format("got multiple values for argument '{}'", name); });
    }
    if (!bind(*index, value, 0)) return std::nullopt;
  }
  if (is_factory(schema)) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (bound[i]) continue;
      TypeKind k = unwrap_optional(*params[i].type()).kind();
      if (params[i].name() == "device" && k == TypeKind::Device && defaults.device) {
        stack[i] = IValue(*defaults.device);
        bound.set(i);
      } else if (params[i].name() == "dtype" && k == TypeKind::ScalarType && defaults.dtype) {
        stack[i] = IValue(*defaults.dtype);
        bound.set(i);
      }
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (bound[i]) continue;
    if (params[i].default_value()) {
      stack[i] = default_argument(*params[i].default_value(), *params[i].type());
    } else {
      return fail([&] {
        return fmt::format("missing required argument '{}' (position {})", params[i].name(), i + 1);
      });
    }
  }
  return stack;
}

std::vector<OperatorHandle> resolve_operator(std::string_view written) {
  std::string_view name = written;
  if (name.starts_with("torch.")) name.remove_prefix(6);
  std::string ns;
  if (size_t sep = name.find("::"); sep != std::string_view::npos) {
    ns = std::string(name.substr(0, sep));
    name.remove_prefix(sep + 2);
  }
  std::string base(name), overload;
  bool has_overload = false;
  if (size_t dot = name.find('.'); dot != std::string_view::npos) {
    base = std::string(name.substr(0, dot));
    overload = std::string(name.substr(dot + 1));
    has_overload = true;
    if (overload == "default") overload.clear();
  }

  auto& d = Dispatcher::singleton();
  std::map<std::string, std::vector<OperatorName>> by_namespace;
  for (OperatorName& op : d.all_op_names()) {
    size_t sep = op.name.find("::");
    std::string op_ns = sep == std::string::npos ? "" : op.name.substr(0, sep);
    std::string op_base = sep == std::string::npos ? op.name : op.name.substr(sep + 2);
    if (op_base != base || (!ns.empty() && op_ns != ns)) continue;
    if (has_overload && op.overload_name != overload) continue;
    by_namespace[op_ns].push_back(std::move(op));
  }
  std::vector<OperatorName>* chosen = nullptr;
  if (by_namespace.count("aten") && ns.empty()) {
    chosen = &by_namespace["aten"];
  } else if (by_namespace.size() == 1) {
    chosen = &by_namespace.begin()->second;
  } else if (by_namespace.size() > 1) {
    std::string names;
    for (const auto& [n, ops] : by_namespace)
      names += (names.empty() ? "" : ", ") + n + "::" + base;
    throw ValueError(fmt::format("opd eval: '{}' is ambiguous: it names {}; write the namespace",
                                 written, names));
  }
  std::vector<OperatorHandle> handles;
  if (chosen) {
    for (const OperatorName& op : *chosen) {
      if (auto h = d.find_schema(op)) handles.push_back(*h);
    }
  }
  OPD_CHECK_T(ValueError, !handles.empty(), "opd eval: unknown operator '{}'", written);
  return sort_overloads(std::move(handles));
}

BoundCall bind_call(std::string_view name, const CallArgs& args, const FactoryDefaults& defaults) {
  return bind_to_overloads(resolve_operator(name), name, args, defaults);
}

BoundCall bind_to_overloads(std::span<const OperatorHandle> candidates, std::string_view name,
                            const CallArgs& args, const FactoryDefaults& defaults) {
  // The first that binds, without collecting anything on the way: the common case.
  for (const OperatorHandle& op : candidates) {
    const FunctionSchema* schema = op.entry().schema_or_null();
    if (schema == nullptr) continue;
    if (auto stack = try_bind(*schema, args, defaults, /*why=*/nullptr)) {
      return {op, schema, std::move(*stack)};
    }
  }
  // Then with numbers as tensors where torch allows it (Note [Numbers as tensors]).
  for (const OperatorHandle& op : candidates) {
    const FunctionSchema* schema = op.entry().schema_or_null();
    if (schema == nullptr || !allows_numbers_as_tensors(*schema)) continue;
    if (auto stack = try_bind(*schema, args, defaults, /*why=*/nullptr, true)) {
      return {op, schema, std::move(*stack)};
    }
  }
  // None did: again, for the error, with every reason.
  std::vector<std::pair<OperatorHandle, const FunctionSchema*>> live;
  live.reserve(candidates.size());
  for (const OperatorHandle& op : candidates) {
    if (const FunctionSchema* s = op.entry().schema_or_null()) live.emplace_back(op, s);
  }
  OPD_CHECK(!live.empty(), "operator {} is not defined (any more)",
            candidates.front().operator_name().name);
  std::vector<std::string> reasons;
  for (const auto& [op, schema] : live) {
    std::string why;
    if (auto stack = try_bind(*schema, args, defaults, &why, allows_numbers_as_tensors(*schema))) {
      return {op, schema, std::move(*stack)};
    }
    reasons.push_back(std::move(why));
  }
  if (live.size() == 1) throw TypeError(fmt::format("{}(): {}", name, reasons[0]));
  std::string message = fmt::format(
      "{}() received an invalid combination of arguments - got ({}), but expected one of:", name,
      describe_arguments(args));
  for (size_t i = 0; i < live.size(); ++i) {
    message += fmt::format("\n * {}\n      didn't match because: {}", live[i].second->to_string(),
                           reasons[i]);
  }
  throw TypeError(message);
}

IValue call_operator(std::string_view name, std::vector<IValue> positional,
                     std::vector<std::pair<std::string, IValue>> keywords) {
  BoundCall call = bind_call(name, {std::move(positional), std::move(keywords)}, {});
  call.op.call_boxed(&call.stack);
  OPD_CHECK(call.stack.size() == 1, "{}: expected one result, got {}", name, call.stack.size());
  return std::move(call.stack[0]);
}

}  // namespace opd::bind
