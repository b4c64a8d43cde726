// Boxed calls through the dispatcher.

#include <fmt/format.h>

#include <algorithm>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "schema/infer_schema.h"

namespace opd {
namespace {

// Whether `v` can be passed where the schema says `t`. Types with no boxed representation of
// their own (Stream, Storage...) accept None only when optional, anything otherwise.
bool matches(const IValue& v, const Type& t) {
  switch (t.kind()) {
    case TypeKind::Tensor:
      return v.is_tensor();
    case TypeKind::Int:
    case TypeKind::SymInt:
    case TypeKind::DeviceIndex:
      return v.is_int();
    case TypeKind::Float:
      return v.is_double();
    case TypeKind::Bool:
      return v.is_bool();
    case TypeKind::Complex:
      return v.is_complex_double();
    case TypeKind::Str:
    case TypeKind::Dimname:
      return v.is_string();
    case TypeKind::Scalar:
      return v.is_scalar();
    case TypeKind::ScalarType:
      return v.is_scalar_type();
    case TypeKind::Layout:
      return v.is_layout();
    case TypeKind::MemoryFormat:
      return v.is_memory_format();
    case TypeKind::Device:
      return v.is_device();
    case TypeKind::None:
      return v.is_none();
    case TypeKind::Optional:
      return v.is_none() || matches(v, *t.contained()[0]);
    case TypeKind::List: {
      const Type& e = *t.contained()[0];
      switch (e.kind()) {
        case TypeKind::Int:
        case TypeKind::SymInt:
          return v.is_int_list();
        case TypeKind::Float:
          return v.is_double_list();
        case TypeKind::Bool:
          return v.is_bool_list();
        case TypeKind::Tensor:
          return v.is_tensor_list();
        case TypeKind::Optional:
          if (e.contained()[0]->kind() == TypeKind::Tensor) {
            return v.is_optional_tensor_list();
          }
          [[fallthrough]];
        default:
          if (!v.is_generic_list()) return false;
          for (const IValue& x : v.to_generic_list()) {
            if (!matches(x, e)) return false;
          }
          return true;
      }
    }
    case TypeKind::Capsule:
      return v.is_capsule();
    case TypeKind::Generator:
      return v.is_generator();  // Note [Generator objects]
    case TypeKind::Tuple: {
      if (!v.is_tuple()) return false;
      const auto& xs = v.to_tuple();
      if (xs.size() != t.contained().size()) return false;
      for (size_t i = 0; i < xs.size(); ++i) {
        if (!matches(xs[i], *t.contained()[i])) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

// A `Device?` argument: None there means CPU for dispatch (see key_set_of in dispatcher.h).
bool is_optional_device(const Type& t) {
  return t.kind() == TypeKind::Optional && t.contained()[0]->kind() == TypeKind::Device;
}

// The dispatch keys an argument brings: its tensors', or a device's backend key; None, where
// the schema declares `declared` as `Device?`, brings CPU's.
DispatchKeySet key_set_of(const IValue& v, const Type* declared) {
  if (v.is_tensor()) return v.to_tensor().key_set();
  if (v.is_none()) {
    return declared != nullptr && is_optional_device(*declared)
               ? detail::key_set_of(std::optional<Device>())
               : DispatchKeySet();
  }
  DispatchKeySet ks;
  if (v.is_tensor_list()) {
    for (const Tensor& t : v.to_tensor_list()) ks = ks | t.key_set();
  } else if (v.is_optional_tensor_list()) {
    for (const auto& t : v.to_optional_tensor_list()) {
      if (t) ks = ks | t->key_set();
    }
  } else if (v.is_device()) {
    ks = detail::key_set_of(v.to_device());
  }
  return ks;
}

// Whether a value that matches `t` can bring dispatch keys: the scalar-like kinds cannot.
bool brings_keys(const Type& t) {
  switch (t.kind()) {
    case TypeKind::Int:
    case TypeKind::SymInt:
    case TypeKind::DeviceIndex:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::Complex:
    case TypeKind::Scalar:
    case TypeKind::Str:
    case TypeKind::Dimname:
    case TypeKind::ScalarType:
    case TypeKind::Layout:
    case TypeKind::MemoryFormat:
      return false;
    default:
      return true;
  }
}

[[noreturn, gnu::cold]] void throw_argument_count(const FunctionSchema& s, size_t held) {
  const size_t n = s.arguments().size();
  throw TypeError(
      fmt::format("{}: expected {} argument{} ({}) but the stack holds {}",
                  s.operator_name().to_string(), n, n == 1 ? "" : "s", s.to_string(), held),
      __FILE__, __LINE__);
}

[[noreturn, gnu::cold]] void throw_argument_type(const FunctionSchema& s, size_t i,
                                                 const IValue& v) {
  const Argument& a = s.arguments()[i];
  throw TypeError(
      fmt::format("{}: argument '{}' (position {}) must be {}, not {}",
                  s.operator_name().to_string(), a.name(), i + 1, a.type()->str(), v.tag_name()),
      __FILE__, __LINE__);
}

// One pass over the call's arguments, the last ones on the stack: checks each against the
// schema (a refused call leaves the stack untouched) and ORs the dispatch keys they bring.
// Operators without a schema (impls only) and vararg ones are not checked: the kernel's own
// unboxing checks types, and every stack element may bring keys.
DispatchKeySet check_arguments_and_collect_keys(const OperatorEntry& op, const Stack& stack) {
  const FunctionSchema* s = op.schema_or_null();
  DispatchKeySet ks;
  if (s == nullptr || s->is_vararg()) {
    // A vararg schema's declared arguments still say which None means CPU.
    for (size_t i = 0; i < stack.size(); ++i) {
      const Type* declared =
          s != nullptr && i < s->arguments().size() ? s->arguments()[i].type().get() : nullptr;
      ks = ks | key_set_of(stack[i], declared);
    }
    return ks;
  }
  const auto& args = s->arguments();
  if (stack.size() < args.size()) [[unlikely]]
    throw_argument_count(*s, stack.size());
  const IValue* base = stack.data() + (stack.size() - args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const IValue& v = base[i];
    const Type& t = *args[i].type();
    // A Tensor, the common case, is checked and read without the general walk.
    if (t.kind() == TypeKind::Tensor) {
      if (!v.is_tensor()) [[unlikely]]
        throw_argument_type(*s, i, v);
      ks = ks | v.to_tensor().key_set();
      continue;
    }
    if (!matches(v, t)) [[unlikely]]
      throw_argument_type(*s, i, v);
    if (brings_keys(t)) ks = ks | key_set_of(v, &t);
  }
  return ks;
}

bool has_autograd_state(const IValue& v) {
  if (v.is_tensor()) return detail::has_autograd_state(v.to_tensor());
  if (v.is_tensor_list()) return detail::has_autograd_state(v.to_tensor_list());
  if (v.is_optional_tensor_list()) return detail::has_autograd_state(v.to_optional_tensor_list());
  return false;
}

// The boxed form of detail::call_key_mask (Note [Autograd fallback fast path]): the arguments
// are the top of the stack, as many as the schema has.
DispatchKeySet call_key_mask(const OperatorEntry& e, const Stack& stack) {
  const auto [mask, fallback] = e.masks();
  if (fallback.empty()) [[likely]]
    return mask;
  // Without a schema (a def undone during the call) every stack element is an argument.
  const FunctionSchema* s = e.schema_or_null();
  if (s != nullptr && (s->is_vararg() || e.writes_arguments())) return mask | fallback;
  const size_t n = s ? std::min(s->arguments().size(), stack.size()) : stack.size();
  const bool any = std::any_of(stack.end() - n, stack.end(),
                               [](const IValue& v) { return has_autograd_state(v); });
  return any ? mask | fallback : mask;
}

// See Note [Observed dispatch].
[[gnu::noinline, gnu::cold]] void call_boxed_observed(const OperatorHandle& op, DispatchKeySet ks,
                                                      DispatchEntry entry,
                                                      const KernelFunction& kernel, Stack* stack) {
  detail::ObservedHop hop(op, ks, entry, kernel);
  kernel.call_boxed(op, ks, stack);
}

}  // namespace

void OperatorHandle::call_boxed(Stack* stack) const {
  const DispatchKeySet ks = detail::compute_dispatch_key_set(
      check_arguments_and_collect_keys(*entry_, *stack), call_key_mask(*entry_, *stack));
  detail::CallScope scope;
  const KernelFunction& kernel = entry_->lookup(ks);
  if (detail::dispatch_observed()) [[unlikely]]
    return call_boxed_observed(*this, ks, DispatchEntry::CallBoxed, kernel, stack);
  kernel.call_boxed(*this, ks, stack);
}

void OperatorHandle::redispatch_boxed(DispatchKeySet keys, Stack* stack) const {
  const DispatchKeySet ks = keys & call_key_mask(*entry_, *stack);
  detail::CallScope scope;
  const KernelFunction& kernel = entry_->lookup(ks);
  if (detail::dispatch_observed()) [[unlikely]]
    return call_boxed_observed(*this, ks, DispatchEntry::RedispatchBoxed, kernel, stack);
  kernel.call_boxed(*this, ks, stack);
}

}  // namespace opd
