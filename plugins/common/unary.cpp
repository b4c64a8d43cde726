// The unary operators' meta functions; see unary.h.

#include "common/unary.h"

#include <string_view>

#include "common/type_dispatch.h"
#include "common/type_promotion.h"
#include "opd/error.h"
#include "opd/native/meta_functions.h"

namespace opd {

namespace {

using common::TensorIterator;
using common::TensorIteratorConfig;
using common::TypeSet;

// The sets of PyTorch 1.13's CPU kernels.
constexpr TypeSet kFloating = TypeSet::Floating.with(kBFloat16);  // exp, erf, log1p...
constexpr TypeSet kFloatingHalf = kFloating.with(kHalf);          // reciprocal, exp2, frac
constexpr TypeSet kRounding = TypeSet::Integral | kFloating;      // floor, ceil, round, trunc
constexpr TypeSet kSigned = TypeSet::Integral | kFloatingHalf;    // neg, abs
constexpr TypeSet kSign = kSigned.with(kBool);                    // sign, sgn, nan_to_num
constexpr TypeSet kBitwise = TypeSet::Integral.with(kBool);       // bitwise_not
constexpr TypeSet kClampScalar = TypeSet::All.with(kBFloat16);    // clamp, clamp_min/max

TensorIterator floating_op(std::string_view name, std::string_view kernel, const Tensor& out,
                           const Tensor& self, TypeSet set = kFloating) {
  TensorIterator iter = TensorIterator::unary_float_op(name, out, self);
  common::check_dtype_in(kernel, iter.common_dtype(), set);
  return iter;
}

TensorIterator same_dtype_op(std::string_view name, std::string_view kernel, const Tensor& out,
                             const Tensor& self, TypeSet set) {
  TensorIterator iter = TensorIterator::unary_op(name, out, self);
  common::check_dtype_in(kernel, iter.common_dtype(), set);
  return iter;
}

// Reads self, writes Bool: into a Bool out= tensor only (`bool_out_only`, isposinf), or cast
// into one of any dtype (logical_not).
TensorIterator boolean_op(std::string_view name, const Tensor& out, const Tensor& self) {
  return TensorIteratorConfig(name)
      .add_output(out)
      .add_input(self)
      .output_dtype(kBool)
      .check_all_same_dtype(false)
      .cast_common_dtype_to_outputs(true)
      .build();
}

TensorIterator inf_test_op(std::string_view name, const Tensor& out, const Tensor& self) {
  OPD_CHECK(!is_complex(self.scalar_type()), "{} does not support complex inputs.", name);
  OPD_CHECK(!out.defined() || out.scalar_type() == kBool,
            "{} does not support non-boolean outputs.", name);
  return boolean_op(name, out, self);
}

// clamp, clamp_min, clamp_max with Scalar bounds: an integral or bool self computes in its
// promotion with the bounds (wrapped numbers), which in place must be self's dtype.
TensorIterator clamp_scalar_op(std::string_view name, std::string_view kernel, const Tensor& out,
                               const Tensor& self, const std::optional<Scalar>& min,
                               const std::optional<Scalar>& max) {
  ScalarType dtype = self.scalar_type();
  OPD_CHECK(!is_complex(dtype), "clamp is not supported for complex types");
  if (!is_floating_point(dtype)) {
    common::ResultTypeState state = common::update_result_type_state(self, {});
    if (min) state = common::update_result_type_state(*min, state);
    if (max) state = common::update_result_type_state(*max, state);
    dtype = common::result_type(state);
    OPD_CHECK(dtype == self.scalar_type() || !out.is_same(self),
              "result type {} can't be cast to the desired output type {}", dtype,
              self.scalar_type());
  }
  TensorIterator iter = TensorIteratorConfig(name)
                            .add_output(out)
                            .add_input(self)
                            .compute_dtype(dtype)
                            .cast_common_dtype_to_outputs(true)
                            .enforce_safe_casting_to_output(true)
                            .build();
  common::check_dtype_in(kernel, dtype, kClampScalar);
  if (min) common::check_scalar_fits(*min, dtype);
  if (max) common::check_scalar_fits(*max, dtype);
  return iter;
}

}  // namespace

namespace common {

TensorIterator clamp_tensor_meta(const Tensor& out, const Tensor& self,
                                 const std::optional<Tensor>& min,
                                 const std::optional<Tensor>& max) {
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  OPD_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  TensorIteratorConfig config("clamp");
  config.add_output(out).add_input(self);
  if (has_min) config.add_input(*min);
  if (has_max) config.add_input(*max);
  TensorIterator iter = config.promote_inputs_to_common_dtype(true)
                            .cast_common_dtype_to_outputs(true)
                            .enforce_safe_casting_to_output(true)
                            .build();
  OPD_CHECK(!is_complex(iter.common_dtype()), "clamp is not supported for complex types");
  // Both bounds: PyTorch's clamp kernel; one: clamp_min's or clamp_max's, which take more.
  if (has_min && has_max) {
    check_dtype_in("clamp_cpu", iter.common_dtype(), kClampScalar);
  } else {
    check_dtype_in(has_min ? "clamp_min_cpu" : "clamp_max_cpu", iter.common_dtype(),
                   kClampScalar.with(kBool, kHalf));
  }
  return iter;
}

}  // namespace common

// The floating functions, named as PyTorch's CPU kernels.
#define OPD_FLOATING_META(op, kernel, set)                         \
  TensorIterator meta::op(const Tensor& out, const Tensor& self) { \
    return floating_op(#op, kernel, out, self, set);               \
  }
OPD_FLOATING_META(exp, "exp_vml_cpu", kFloating)
OPD_FLOATING_META(log, "log_vml_cpu", kFloating)
OPD_FLOATING_META(sqrt, "sqrt_vml_cpu", kFloating)
OPD_FLOATING_META(rsqrt, "rsqrt_cpu", kFloating)
OPD_FLOATING_META(sin, "sin_vml_cpu", kFloating)
OPD_FLOATING_META(cos, "cos_vml_cpu", kFloating)
OPD_FLOATING_META(tanh, "tanh_vml_cpu", kFloating)
OPD_FLOATING_META(sigmoid, "sigmoid_cpu", kFloating)
OPD_FLOATING_META(reciprocal, "reciprocal_cpu", kFloatingHalf)
OPD_FLOATING_META(log1p, "log1p_vml_cpu", kFloating)
OPD_FLOATING_META(expm1, "expm1_vml_cpu", kFloating)
OPD_FLOATING_META(log2, "log2_vml_cpu", kFloating)
OPD_FLOATING_META(log10, "log10_vml_cpu", kFloating)
OPD_FLOATING_META(exp2, "exp2", kFloatingHalf)
OPD_FLOATING_META(erf, "erf_vml_cpu", kFloating)
OPD_FLOATING_META(erfc, "erfc_vml_cpu", kFloating)
OPD_FLOATING_META(erfinv, "erfinv_vml_cpu", kFloating)
OPD_FLOATING_META(asin, "asin_vml_cpu", kFloating)
OPD_FLOATING_META(acos, "acos_vml_cpu", kFloating)
OPD_FLOATING_META(atan, "atan_vml_cpu", kFloating)
OPD_FLOATING_META(asinh, "asinh_cpu", kFloating)
OPD_FLOATING_META(acosh, "acosh_cpu", kFloating)
OPD_FLOATING_META(atanh, "atanh_cpu", kFloating)
OPD_FLOATING_META(sinh, "sinh_cpu", kFloating)
OPD_FLOATING_META(cosh, "cosh_cpu", kFloating)
OPD_FLOATING_META(tan, "tan_vml_cpu", kFloating)
#undef OPD_FLOATING_META

#define OPD_SAME_DTYPE_META(op, kernel, set)                       \
  TensorIterator meta::op(const Tensor& out, const Tensor& self) { \
    return same_dtype_op(#op, kernel, out, self, set);             \
  }
OPD_SAME_DTYPE_META(floor, "floor_vml_cpu", kRounding)
OPD_SAME_DTYPE_META(ceil, "ceil_vml_cpu", kRounding)
OPD_SAME_DTYPE_META(round, "round_vml_cpu", kRounding)
OPD_SAME_DTYPE_META(trunc, "trunc_vml_cpu", kRounding)
OPD_SAME_DTYPE_META(frac, "frac_cpu", kFloatingHalf)
OPD_SAME_DTYPE_META(sgn, "sgn_cpu", kSign)
OPD_SAME_DTYPE_META(abs, "abs_cpu", kSigned)
OPD_SAME_DTYPE_META(bitwise_not, "bitwise_not_cpu", kBitwise)
#undef OPD_SAME_DTYPE_META

TensorIterator meta::round_decimals(const Tensor& out, const Tensor& self, int64_t) {
  return same_dtype_op("round", "round_cpu", out, self, kFloating);
}

TensorIterator meta::sign(const Tensor& out, const Tensor& self) {
  OPD_CHECK(!is_complex(self.scalar_type()),
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead.");
  return same_dtype_op("sign", "sign_cpu", out, self, kSign);
}

TensorIterator meta::neg(const Tensor& out, const Tensor& self) {
  OPD_CHECK(self.scalar_type() != kBool,
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.");
  return same_dtype_op("neg", "neg_cpu", out, self, kSigned);
}

TensorIterator meta::nan_to_num(const Tensor& out, const Tensor& self, std::optional<double>,
                                std::optional<double>, std::optional<double>) {
  // Integers and bools are copied, as PyTorch's copy_: in place that writes each element's own
  // value, so an expanded self is not refused.
  if (is_integral(self.scalar_type(), /*include_bool=*/true) && out.is_same(self)) {
    return TensorIteratorConfig("nan_to_num")
        .add_output(out)
        .add_input(self)
        .check_mem_overlap(false)
        .build();
  }
  return same_dtype_op("nan_to_num", "nan_to_num", out, self, kSign);
}

TensorIterator meta::isposinf(const Tensor& out, const Tensor& self) {
  return inf_test_op("isposinf", out, self);
}
TensorIterator meta::isneginf(const Tensor& out, const Tensor& self) {
  return inf_test_op("isneginf", out, self);
}
TensorIterator meta::logical_not(const Tensor& out, const Tensor& self) {
  return boolean_op("logical_not", out, self);
}

TensorIterator meta::clamp(const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                           const std::optional<Scalar>& max) {
  OPD_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  return clamp_scalar_op("clamp", "clamp_scalar_cpu", out, self, min, max);
}
TensorIterator meta::clamp_min(const Tensor& out, const Tensor& self, const Scalar& min) {
  return clamp_scalar_op("clamp_min", "clamp_min_cpu", out, self, min, std::nullopt);
}
TensorIterator meta::clamp_max(const Tensor& out, const Tensor& self, const Scalar& max) {
  return clamp_scalar_op("clamp_max", "clamp_max_scalar_cpu", out, self, std::nullopt, max);
}
TensorIterator meta::clamp_Tensor(const Tensor& out, const Tensor& self,
                                  const std::optional<Tensor>& min,
                                  const std::optional<Tensor>& max) {
  return common::clamp_tensor_meta(out, self, min, max);
}
TensorIterator meta::clamp_min_Tensor(const Tensor& out, const Tensor& self, const Tensor& min) {
  return common::clamp_tensor_meta(out, self, min, std::nullopt);
}
TensorIterator meta::clamp_max_Tensor(const Tensor& out, const Tensor& self, const Tensor& max) {
  return common::clamp_tensor_meta(out, self, std::nullopt, max);
}

}  // namespace opd
