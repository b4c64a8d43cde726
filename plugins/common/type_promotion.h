#pragma once

// Type promotion (torch.result_type): the dtype an operator computes in when its operands'
// dtypes differ.
//
// Note [Result type]
// Operands fall into three tiers: tensors with dimensions, zero-dim tensors, and wrapped numbers
// (zero-dim tensors made from a C++ or Python number, TensorImpl::is_wrapped_number()). Each tier
// promotes its own dtypes with promote_types; then a lower tier only matters when its category
// (bool < integral < floating < complex) is higher than the higher tier's: int32 tensor + int64
// zero-dim tensor is int32, int32 tensor + float64 zero-dim tensor is float64, float16 tensor +
// float64 zero-dim tensor stays float16. A wrapped floating number counts as the default dtype
// (Float) and a wrapped complex one as ComplexFloat, so int64 tensor + 2.5 is Float.

#include <span>

#include "opd/scalar.h"
#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd::common {

// The default floating dtype (torch.get_default_dtype()) and its complex counterpart.
inline constexpr ScalarType kDefaultDtype = ScalarType::Float32;
inline constexpr ScalarType kDefaultComplexDtype = ScalarType::ComplexFloat;

// The promoted dtype of each tier seen so far; Undefined while a tier is empty.
struct ResultTypeState {
  ScalarType dim_result = ScalarType::Undefined;
  ScalarType zero_result = ScalarType::Undefined;
  ScalarType wrapped_result = ScalarType::Undefined;
};

// `state` with `tensor` added to its tier; an undefined tensor changes nothing.
ResultTypeState update_result_type_state(const Tensor& tensor, const ResultTypeState& state);
// `state` with a number added as a wrapped number (clamp's min and max, pow's exponent).
ResultTypeState update_result_type_state(const Scalar& scalar, const ResultTypeState& state);
// The dtype the tiers combine to; see Note [Result type]. Undefined when every tier is empty.
ScalarType result_type(const ResultTypeState& state);

// torch.result_type over tensors (undefined ones are skipped).
ScalarType result_type(std::span<const Tensor> tensors);
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);

// PyTorch's canCast: whether a result of dtype `from` may be written into a tensor of dtype `to`
// by an in-place or out= operator. Refused: complex into non-complex, floating into integral,
// and anything but bool into bool.
bool can_cast(ScalarType from, ScalarType to);

}  // namespace opd::common
