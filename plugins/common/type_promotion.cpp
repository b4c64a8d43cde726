#include "common/type_promotion.h"

namespace opd::common {
namespace {

ScalarType promote_skip_undefined(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  return promote_types(a, b);
}

ScalarType to_complex(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::ComplexDouble : ScalarType::ComplexFloat;
}

// Combines a higher tier with a lower one; see Note [Result type].
ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (is_complex(higher)) return higher;
  if (is_complex(lower)) {
    // A floating higher tier keeps its precision: float64 tensor with a complex64 zero-dim
    // tensor gives complex128; an integral or bool one takes the lower tier's complex type.
    return is_floating_point(higher) ? to_complex(higher) : lower;
  }
  if (is_floating_point(higher)) return higher;
  // Bool is a category of its own, so anything above it wins; a floating lower tier wins over
  // an integral higher one.
  if (higher == ScalarType::Bool || is_floating_point(lower)) {
    return promote_skip_undefined(higher, lower);
  }
  return higher != ScalarType::Undefined ? higher : lower;
}

ResultTypeState add_wrapped(ScalarType current, ResultTypeState state) {
  if (is_complex(current)) {
    current = kDefaultComplexDtype;
  } else if (is_floating_point(current)) {
    current = kDefaultDtype;
  }
  state.wrapped_result = promote_skip_undefined(state.wrapped_result, current);
  return state;
}

}  // namespace

ResultTypeState update_result_type_state(const Tensor& tensor, const ResultTypeState& state) {
  if (!tensor.defined()) return state;
  ResultTypeState next = state;
  const ScalarType current = tensor.scalar_type();
  if (tensor.dim() > 0) {
    next.dim_result = promote_skip_undefined(state.dim_result, current);
  } else if (tensor.unsafe_get_impl()->is_wrapped_number()) {
    next = add_wrapped(current, state);
  } else {
    next.zero_result = promote_skip_undefined(state.zero_result, current);
  }
  return next;
}

ResultTypeState update_result_type_state(const Scalar& scalar, const ResultTypeState& state) {
  return add_wrapped(scalar.type(), state);
}

ScalarType result_type(const ResultTypeState& state) {
  return combine_categories(state.dim_result,
                            combine_categories(state.zero_result, state.wrapped_result));
}

ScalarType result_type(std::span<const Tensor> tensors) {
  ResultTypeState state;
  for (const Tensor& t : tensors) state = update_result_type_state(t, state);
  return result_type(state);
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  return result_type(update_result_type_state(b, update_result_type_state(a, {})));
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  return result_type(update_result_type_state(b, update_result_type_state(a, {})));
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating_point(from) && is_integral(to, /*include_bool=*/false)) return false;
  return from == ScalarType::Bool || to != ScalarType::Bool;
}

}  // namespace opd::common
