// Boxed calls through the dispatcher.

#include <fmt/format.h>

#include "infer_schema.h"
#include "opd/dispatcher.h"
#include "opd/error.h"

namespace opd {
namespace {

// Whether `v` can be passed where the schema says `t`. Types with no boxed representation of
// their own (Generator, Stream, Storage...) accept None only when optional, anything otherwise.
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

void check_arguments(const OperatorHandle& op, const Stack& stack) {
  if (!op.has_schema()) return;  // impl-only operators: the kernel's own unboxing checks types
  const FunctionSchema& s = op.schema();
  if (s.is_vararg()) return;
  const auto& args = s.arguments();
  OPD_CHECK_T(TypeError, stack.size() >= args.size(),
              "{}: expected {} argument{} ({}) but the stack holds {}",
              s.operator_name().to_string(), args.size(), args.size() == 1 ? "" : "s",
              s.to_string(), stack.size());
  const IValue* base = stack.data() + (stack.size() - args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    OPD_CHECK_T(TypeError, matches(base[i], *args[i].type()),
                "{}: argument '{}' (position {}) must be {}, not {}", s.operator_name().to_string(),
                args[i].name(), i + 1, args[i].type()->str(), base[i].tag_name());
  }
}

// A `Device?` argument: None there means CPU for dispatch (see key_set_of in dispatcher.h).
bool is_device_argument(const FunctionSchema& s, size_t index) {
  if (index >= s.arguments().size()) return false;
  const Type& t = *s.arguments()[index].type();
  return t.kind() == TypeKind::Optional && t.contained()[0]->kind() == TypeKind::Device;
}

DispatchKeySet stack_key_set(const OperatorHandle& op, const Stack& stack) {
  size_t n =
      op.has_schema() && !op.schema().is_vararg() ? op.schema().arguments().size() : stack.size();
  DispatchKeySet ks;
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    if (v.is_tensor()) {
      ks = ks | v.to_tensor().key_set();
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) ks = ks | t.key_set();
    } else if (v.is_optional_tensor_list()) {
      for (const auto& t : v.to_optional_tensor_list()) {
        if (t) ks = ks | t->key_set();
      }
    } else if (v.is_device()) {
      ks = ks | detail::key_set_of(v.to_device());
    } else if (v.is_none() && op.has_schema() &&
               is_device_argument(op.schema(), i - (stack.size() - n))) {
      ks = ks | detail::key_set_of(std::optional<Device>());
    }
  }
  return ks;
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
  check_arguments(*this, *stack);
  DispatchKeySet ks =
      detail::compute_dispatch_key_set(stack_key_set(*this, *stack), entry_->key_mask());
  detail::CallScope scope;
  const KernelFunction& kernel = entry_->lookup(ks);
  if (detail::dispatch_observed()) [[unlikely]]
    return call_boxed_observed(*this, ks, DispatchEntry::CallBoxed, kernel, stack);
  kernel.call_boxed(*this, ks, stack);
}

void OperatorHandle::redispatch_boxed(DispatchKeySet keys, Stack* stack) const {
  DispatchKeySet ks = keys & entry_->key_mask();
  detail::CallScope scope;
  const KernelFunction& kernel = entry_->lookup(ks);
  if (detail::dispatch_observed()) [[unlikely]]
    return call_boxed_observed(*this, ks, DispatchEntry::RedispatchBoxed, kernel, stack);
  kernel.call_boxed(*this, ks, stack);
}

}  // namespace opd
