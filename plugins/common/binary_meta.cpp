// The metadata steps of the binary and ternary operators beyond add, sub, mul and div: the
// structured operators' meta functions (opd/native/meta_functions.h) for remainder, fmod, div
// with a rounding mode, floor_divide, the bitwise, shift and logical operators, atan2, hypot,
// copysign, lerp, addcmul, addcdiv and the comparisons' out= forms. Each makes the checks of the
// CPU kernel's dtype dispatch, as Note [Dtype checks in the metadata step] asks, with the kernel's
// name and set as PyTorch 1.13's.

#include "common/elementwise.h"
#include "common/type_dispatch.h"
#include "opd/native/meta_functions.h"

namespace opd::common {
namespace {

// The numeric types with Half and BFloat16: remainder, fmod, div with a rounding mode.
constexpr TypeSet kRealTypes = TypeSet::All.with(kHalf, kBFloat16);

}  // namespace

RoundingMode rounding_mode(std::optional<std::string_view> mode) {
  if (!mode) return RoundingMode::True;
  if (*mode == "trunc") return RoundingMode::Trunc;
  OPD_CHECK(*mode == "floor",
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'",
            *mode);
  return RoundingMode::Floor;
}

TensorIterator div_mode_meta(const Tensor& out, const Tensor& self, const Tensor& other,
                             RoundingMode mode) {
  if (mode == RoundingMode::True) return meta::div(out, self, other);
  TensorIterator iter = TensorIterator::binary_op("div", out, self, other);
  check_kernel_dtype(mode == RoundingMode::Trunc ? "div_trunc" : "div_floor", iter.device(),
                     iter.common_dtype(), kRealTypes);
  return iter;
}

TensorIterator logical_meta(std::string_view name, const Tensor& out, const Tensor& self,
                            const Tensor& other) {
  TensorIterator iter = TensorIterator::comparison_op(name, out, self, other);
  check_kernel_dtype(name, iter.device(), iter.common_dtype(), TypeSet::Every);
  return iter;
}

}  // namespace opd::common

namespace opd {

using common::check_kernel_dtype;
using common::kRealTypes;
using common::TensorIterator;
using common::TypeSet;

namespace {

// binary_op whose CPU kernel is "<name>_cpu" over `set`.
TensorIterator checked_binary_op(std::string_view name, const Tensor& out, const Tensor& self,
                                 const Tensor& other, TypeSet set) {
  TensorIterator iter = TensorIterator::binary_op(name, out, self, other);
  check_kernel_dtype(name, iter.device(), iter.common_dtype(), set);
  return iter;
}

// binary_float_op (integral inputs computed in Float) whose CPU kernel is "<name>_cpu".
TensorIterator checked_binary_float_op(std::string_view name, const Tensor& out, const Tensor& self,
                                       const Tensor& other, TypeSet set) {
  TensorIterator iter = TensorIterator::binary_float_op(name, out, self, other);
  check_kernel_dtype(name, iter.device(), iter.common_dtype(), set);
  return iter;
}

// lerp computes in self's dtype: end and weight must have it.
void check_lerp_dtype(const Tensor& self, const Tensor& other, std::string_view name) {
  OPD_CHECK(self.scalar_type() == other.scalar_type(),
            "expected dtype {} for `{}` but got dtype {}", python_name(self.scalar_type()), name,
            python_name(other.scalar_type()));
}

// addcmul and addcdiv: self, tensor1, tensor2 promoted together (PyTorch's build_ternary_op).
TensorIterator ternary_op(std::string_view name, const Tensor& out, const Tensor& self,
                          const Tensor& tensor1, const Tensor& tensor2) {
  return common::TensorIteratorConfig(name)
      .add_output(out)
      .add_input(self)
      .add_input(tensor1)
      .add_input(tensor2)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

}  // namespace

TensorIterator meta::remainder_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return checked_binary_op("remainder", out, self, other, kRealTypes);
}

TensorIterator meta::fmod_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return checked_binary_op("fmod", out, self, other, kRealTypes);
}

TensorIterator meta::div_out_mode(const Tensor& out, const Tensor& self, const Tensor& other,
                                  std::optional<std::string_view> rounding_mode) {
  return common::div_mode_meta(out, self, other, common::rounding_mode(rounding_mode));
}

TensorIterator meta::floor_divide(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::div_mode_meta(out, self, other, common::RoundingMode::Floor);
}

TensorIterator meta::bitwise_and_Tensor(const Tensor& out, const Tensor& self,
                                        const Tensor& other) {
  return checked_binary_op("bitwise_and", out, self, other, TypeSet::Integral.with(kBool));
}

TensorIterator meta::bitwise_or_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return checked_binary_op("bitwise_or", out, self, other, TypeSet::Integral.with(kBool));
}

TensorIterator meta::bitwise_xor_Tensor(const Tensor& out, const Tensor& self,
                                        const Tensor& other) {
  return checked_binary_op("bitwise_xor", out, self, other, TypeSet::Integral.with(kBool));
}

TensorIterator meta::bitwise_left_shift_Tensor(const Tensor& out, const Tensor& self,
                                               const Tensor& other) {
  TensorIterator iter = TensorIterator::binary_op("bitwise_left_shift", out, self, other);
  check_kernel_dtype("lshift", iter.device(), iter.common_dtype(), TypeSet::Integral);
  return iter;
}

TensorIterator meta::bitwise_right_shift_Tensor(const Tensor& out, const Tensor& self,
                                                const Tensor& other) {
  TensorIterator iter = TensorIterator::binary_op("bitwise_right_shift", out, self, other);
  check_kernel_dtype("rshift", iter.device(), iter.common_dtype(), TypeSet::Integral);
  return iter;
}

TensorIterator meta::logical_and(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::logical_meta("logical_and", out, self, other);
}
TensorIterator meta::logical_or(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::logical_meta("logical_or", out, self, other);
}
TensorIterator meta::logical_xor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::logical_meta("logical_xor", out, self, other);
}

TensorIterator meta::atan2(const Tensor& out, const Tensor& self, const Tensor& other) {
  return checked_binary_float_op("atan2", out, self, other, TypeSet::Floating.with(kBFloat16));
}

TensorIterator meta::hypot(const Tensor& out, const Tensor& self, const Tensor& other) {
  return checked_binary_op("hypot", out, self, other, TypeSet::Floating.with(kBFloat16));
}

TensorIterator meta::copysign(const Tensor& out, const Tensor& self, const Tensor& other) {
  return checked_binary_float_op("copysign", out, self, other,
                                 TypeSet::Floating.with(kHalf, kBFloat16));
}

TensorIterator meta::lerp_Scalar(const Tensor& out, const Tensor& self, const Tensor& end,
                                 const Scalar& weight) {
  check_lerp_dtype(self, end, "end");
  TensorIterator iter =
      common::TensorIteratorConfig("lerp").add_output(out).add_input(self).add_input(end).build();
  common::check_dtype_in("lerp_kernel_scalar", iter.common_dtype(),
                         TypeSet::Floating.with(kBFloat16) | TypeSet::Complex);
  common::check_scalar_fits(weight, iter.common_dtype());
  return iter;
}

TensorIterator meta::lerp_Tensor(const Tensor& out, const Tensor& self, const Tensor& end,
                                 const Tensor& weight) {
  check_lerp_dtype(self, end, "end");
  check_lerp_dtype(self, weight, "weight");
  TensorIterator iter = common::TensorIteratorConfig("lerp")
                            .add_output(out)
                            .add_input(self)
                            .add_input(end)
                            .add_input(weight)
                            .build();
  common::check_dtype_in("lerp_kernel_tensor", iter.common_dtype(),
                         TypeSet::Floating.with(kBFloat16) | TypeSet::Complex);
  return iter;
}

TensorIterator meta::addcmul(const Tensor& out, const Tensor& self, const Tensor& tensor1,
                             const Tensor& tensor2, const Scalar& value) {
  TensorIterator iter = ternary_op("addcmul", out, self, tensor1, tensor2);
  check_kernel_dtype("addcmul", iter.device(), iter.common_dtype(),
                     TypeSet::All.with(kBFloat16) | TypeSet::Complex);
  common::check_scalar_fits(value, iter.common_dtype());
  return iter;
}

TensorIterator meta::addcdiv(const Tensor& out, const Tensor& self, const Tensor& tensor1,
                             const Tensor& tensor2, const Scalar& value) {
  OPD_CHECK(!is_integral(tensor1.scalar_type(), /*include_bool=*/true) ||
                !is_integral(tensor2.scalar_type(), /*include_bool=*/true),
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / "
            "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
            "tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  TensorIterator iter = ternary_op("addcdiv", out, self, tensor1, tensor2);
  check_kernel_dtype("addcdiv", iter.device(), iter.common_dtype(),
                     TypeSet::All.with(kBFloat16) | TypeSet::Complex);
  common::check_scalar_fits(value, iter.common_dtype());
  return iter;
}

TensorIterator meta::eq_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::comparison_meta("eq", out, self, other);
}
TensorIterator meta::ne_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::comparison_meta("ne", out, self, other);
}
TensorIterator meta::lt_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::comparison_meta("lt", out, self, other);
}
TensorIterator meta::le_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::comparison_meta("le", out, self, other);
}
TensorIterator meta::gt_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::comparison_meta("gt", out, self, other);
}
TensorIterator meta::ge_Tensor(const Tensor& out, const Tensor& self, const Tensor& other) {
  return common::comparison_meta("ge", out, self, other);
}

}  // namespace opd
