#include "common/elementwise.h"

#include <string>

#include "common/output.h"
#include "common/type_dispatch.h"
#include "common/type_promotion.h"
#include "opd/native/meta_functions.h"
#include "opd/ops.h"

namespace opd::common {
namespace {

// PyTorch's relu has no bool kernel, and clamp_min, which would take one, must not be reached.
void check_relu_input(const Tensor& self) {
  OPD_CHECK(self.scalar_type() != ScalarType::Bool, "Boolean inputs not supported for relu");
}

void check_alpha(ScalarType dtype, const Scalar& alpha) {
  OPD_CHECK(!alpha.is_boolean() || dtype == ScalarType::Bool,
            "Boolean alpha only supported for Boolean results.");
  OPD_CHECK(is_floating_point(dtype) || is_complex(dtype) || alpha.is_integral(true),
            "For integral input tensors, argument alpha must not be a floating point number.");
  OPD_CHECK(is_complex(dtype) || !alpha.is_complex(),
            "For non-complex input tensors, argument alpha must not be a complex number.");
}

// The kernel's name in dtype errors: "<op>_cpu" or "<op>_cuda", as PyTorch names most of them.
std::string kernel_name(std::string_view op, const Device& device) {
  return std::string(op) + (device.is_cuda() ? "_cuda" : "_cpu");
}

// The dtype check of the kernel called `name` on `device`: the CPU's sets, and on CUDA also Half
// and BFloat16 (computed in float) wherever floating types are taken, as PyTorch's CUDA kernels
// do.
void check_dtype_on(const Device& device, std::string_view name, ScalarType dtype, TypeSet set) {
  if (device.is_cuda() && set.contains(kFloat)) set = set.with(kHalf, kBFloat16);
  check_dtype_in(name, dtype, set);
}
}  // namespace

void check_kernel_dtype(std::string_view op, const Device& device, ScalarType dtype, TypeSet set) {
  check_dtype_on(device, kernel_name(op, device), dtype, set);
}

Scalar negated(const Scalar& s) {
  if (s.is_complex()) return Scalar(-s.to_complex_double());
  if (s.is_floating_point()) return Scalar(-s.to_double());
  return Scalar(-s.to_int64());
}

void check_add(const Device& device, ScalarType dtype, const Scalar& alpha) {
  check_alpha(dtype, alpha);
  check_kernel_dtype("add", device, dtype, kArithmeticTypes);
  check_scalar_fits(alpha, dtype);
}

void check_sub_operands(const Tensor& self, const Tensor& other) {
  OPD_CHECK(self.scalar_type() != ScalarType::Bool || other.scalar_type() != ScalarType::Bool,
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.");
  OPD_CHECK(self.scalar_type() != ScalarType::Bool && other.scalar_type() != ScalarType::Bool,
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

void check_sub(const Device& device, ScalarType dtype, const Scalar& alpha) {
  check_alpha(dtype, alpha);
  check_kernel_dtype("sub", device, dtype, kArithmeticTypes);
  check_scalar_fits(negated(alpha), dtype);
}

void check_mul(const Device& device, ScalarType dtype) {
  check_kernel_dtype("mul", device, dtype, kArithmeticTypes);
}

TensorIterator pow_meta(const Tensor& out, const Tensor& self, const Scalar& exponent) {
  OPD_CHECK(!(is_integral(self.scalar_type(), /*include_bool=*/true) &&
              exponent.is_integral(/*include_bool=*/true) && exponent.to_int64() < 0),
            "Integers to negative integer powers are not allowed.");
  TensorIterator iter = TensorIteratorConfig("pow")
                            .add_output(out)
                            .add_input(self)
                            .compute_dtype(result_type(self, exponent))
                            .build();
  const ScalarType dtype = iter.common_dtype();
  if (pow_is_trivial(exponent)) {
    check_dtype_in("pow", dtype, kArithmeticTypes);
  } else if (is_integral(dtype, /*include_bool=*/false)) {
    check_dtype_in("pow", dtype, TypeSet::Integral);
    check_scalar_fits(exponent, dtype);
  } else {
    check_dtype_in("pow", dtype, kFloatingAndComplexTypes);
  }
  return iter;
}

bool pow_is_trivial(const Scalar& exponent) {
  return !exponent.is_complex() && (exponent.to_double() == 0 || exponent.to_double() == 1);
}

TensorIterator pow_meta(const Tensor& out, const Tensor& self, const Tensor& exponent) {
  TensorIterator iter = TensorIterator::binary_op("pow", out, self, exponent);
  const bool integral = is_integral(iter.common_dtype(), /*include_bool=*/false);
  check_dtype_in("pow", iter.common_dtype(),
                 integral ? TypeSet::Integral : kFloatingAndComplexTypes);
  return iter;
}

TensorIterator min_max_meta(std::string_view name, const Tensor& out, const Tensor& self,
                            const Tensor& other) {
  OPD_CHECK(!is_complex(self.scalar_type()) && !is_complex(other.scalar_type()),
            "{} not implemented for complex tensors.", name);
  TensorIterator iter = TensorIterator::binary_op(name, out, self, other);
  check_kernel_dtype(name, iter.device(), iter.common_dtype(), kOrderedTypes);
  return iter;
}

TensorIterator comparison_meta(std::string_view name, const Tensor& out, const Tensor& self,
                               const Tensor& other) {
  TensorIterator iter = TensorIterator::comparison_op(name, out, self, other);
  // Complex numbers are equal or not, but have no order.
  const bool equality = name == "eq" || name == "ne";
  check_kernel_dtype(name, iter.device(), iter.common_dtype(),
                     equality ? kArithmeticTypes : kOrderedTypes);
  return iter;
}

TensorIterator where_meta(const Tensor& out, const Tensor& condition, const Tensor& self,
                          const Tensor& other) {
  OPD_CHECK(condition.scalar_type() == ScalarType::Bool,
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            condition.scalar_type());
  const ScalarType dtype = result_type(self, other);
  // The condition keeps its dtype, so the values are converted here rather than by the
  // iterator (which would convert every input). Meta tensors too: they have nothing to copy,
  // but the converted tensor's layout is what the output's follows.
  const auto value = [&](const Tensor& t) { return converted(t, dtype); };
  check_kernel_dtype("where", self.device(), dtype, kArithmeticTypes);
  return TensorIteratorConfig("where")
      .add_output(out)
      .add_input(condition)
      .add_owned_input(value(self))
      .add_owned_input(value(other))
      .check_all_same_dtype(false)
      .output_dtype(dtype)
      .build();
}

TensorIterator neg_meta(const Tensor& out, const Tensor& self) {
  OPD_CHECK(self.scalar_type() != ScalarType::Bool,
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.");
  TensorIterator iter = TensorIterator::unary_op("neg", out, self);
  check_kernel_dtype("neg", iter.device(), iter.common_dtype(), TypeSet::All);
  return iter;
}

TensorIterator abs_meta(const Tensor& out, const Tensor& self) {
  TensorIterator iter = TensorIterator::unary_op("abs", out, self);
  check_kernel_dtype("abs", iter.device(), iter.common_dtype(), TypeSet::All);
  return iter;
}

TensorIterator unary_float_meta(std::string_view name, const Tensor& out, const Tensor& self) {
  TensorIterator iter = TensorIterator::unary_float_op(name, out, self);
  check_kernel_dtype(name, iter.device(), iter.common_dtype(), TypeSet::Floating);
  return iter;
}

TensorIterator relu_meta(const Tensor& out, const Tensor& self) {
  check_relu_input(self);
  TensorIterator iter = TensorIterator::unary_op("relu", out, self);
  check_kernel_dtype("relu", iter.device(), iter.common_dtype(), TypeSet::All);
  return iter;
}

Tensor relu(const Tensor& self) {
  check_relu_input(self);
  return opd::clamp_min(self, 0);
}

Tensor& relu_(Tensor& self) {
  check_relu_input(self);
  return opd::clamp_min_(self, 0);
}

GeluApproximation gelu_approximation(std::string_view approximate) {
  if (approximate == "none") return GeluApproximation::None;
  OPD_CHECK(approximate == "tanh", "approximate argument must be either none or tanh.");
  return GeluApproximation::Tanh;
}

TensorIterator gelu_meta(const Tensor& out, const Tensor& self, std::string_view approximate) {
  gelu_approximation(approximate);
  TensorIterator iter = TensorIterator::unary_op("gelu", out, self);
  check_dtype_on(iter.device(), "GeluKernelImpl", iter.common_dtype(), kGeluTypes);
  return iter;
}

TensorIterator clamp_meta(const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                          const std::optional<Scalar>& max) {
  OPD_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  ScalarType dtype = self.scalar_type();
  OPD_CHECK(!is_complex(dtype), "clamp is not supported for complex types");
  // Floating tensors are the top of the promotion clamp allows; others may be promoted by the
  // bounds (an int tensor clamped to 0.5 computes in Float).
  if (!is_floating_point(dtype)) {
    ResultTypeState state = update_result_type_state(self, {});
    if (min) state = update_result_type_state(*min, state);
    if (max) state = update_result_type_state(*max, state);
    dtype = result_type(state);
    OPD_CHECK(dtype == self.scalar_type() || !out.is_same(self),
              "result type {} can't be cast to the desired output type {}", dtype,
              self.scalar_type());
  }
  OPD_CHECK(!is_complex(dtype), "clamp is not supported for complex types");
  TensorIterator iter =
      TensorIteratorConfig("clamp").add_output(out).add_input(self).compute_dtype(dtype).build();
  check_kernel_dtype("clamp_scalar", iter.device(), dtype, TypeSet::All);
  if (min) check_scalar_fits(*min, dtype);
  if (max) check_scalar_fits(*max, dtype);
  return iter;
}

TensorIterator threshold_backward_meta(const Tensor& out, const Tensor& grad_output,
                                       const Tensor& self, const Scalar& threshold) {
  TensorIterator iter = TensorIteratorConfig("threshold_backward")
                            .add_output(out)
                            .add_input(self)
                            .add_input(grad_output)
                            .promote_inputs_to_common_dtype(true)
                            .cast_common_dtype_to_outputs(true)
                            .enforce_safe_casting_to_output(true)
                            .build();
  check_kernel_dtype("threshold_backward", iter.device(), iter.common_dtype(), TypeSet::All);
  check_scalar_fits(threshold, iter.common_dtype());
  return iter;
}

TensorIterator pointwise_backward_meta(std::string_view name, std::string_view kernel_name,
                                       const Tensor& out, const Tensor& grad_output,
                                       const Tensor& other, TypeSet types) {
  TensorIterator iter = TensorIterator::binary_op(name, out, grad_output, other);
  check_dtype_on(iter.device(), kernel_name, iter.common_dtype(), types);
  return iter;
}

std::optional<TensorIterator> copy_meta(const Tensor& self, const Tensor& src) {
  if (self.is_same(src)) return std::nullopt;
  if (!self.is_meta()) {
    OPD_CHECK_T(NotImplementedError, !src.is_meta(), "Cannot copy out of meta tensor; no data!");
  }
  TensorIterator iter = TensorIteratorConfig("copy_")
                            .add_output(self)
                            .add_input(src)
                            .resize_outputs(false)
                            .check_all_same_dtype(false)
                            .check_all_same_device(false)
                            .build();
  const bool same_data = self.storage().is_same(src.storage()) &&
                         self.storage_offset() == src.storage_offset() &&
                         self.sizes().equals(src.sizes()) && self.strides().equals(src.strides()) &&
                         self.scalar_type() == src.scalar_type();
  if (self.is_meta() || same_data || iter.numel() == 0) return std::nullopt;
  return iter;
}

TensorIterator fill_meta(const Tensor& self, const Scalar& value) {
  TensorIterator iter = TensorIterator::nullary_op("fill_", self);
  check_scalar_fits(value, self.scalar_type());
  return iter;
}

}  // namespace opd::common

// The structured operators' meta functions (opd/native/meta_functions.h).
namespace opd {

using common::TensorIterator;

TensorIterator meta::add(const Tensor& out, const Tensor& self, const Tensor& other,
                         const Scalar& alpha) {
  TensorIterator iter = TensorIterator::binary_op("add", out, self, other);
  common::check_add(iter.device(), iter.common_dtype(), alpha);
  return iter;
}

TensorIterator meta::sub(const Tensor& out, const Tensor& self, const Tensor& other,
                         const Scalar& alpha) {
  common::check_sub_operands(self, other);
  TensorIterator iter = TensorIterator::binary_op("sub", out, self, other);
  common::check_sub(iter.device(), iter.common_dtype(), alpha);
  return iter;
}

TensorIterator meta::mul(const Tensor& out, const Tensor& self, const Tensor& other) {
  TensorIterator iter = TensorIterator::binary_op("mul", out, self, other);
  common::check_mul(iter.device(), iter.common_dtype());
  return iter;
}

TensorIterator meta::div(const Tensor& out, const Tensor& self, const Tensor& other) {
  TensorIterator iter = TensorIterator::binary_float_op("div", out, self, other);
  common::check_kernel_dtype("div_true", iter.device(), iter.common_dtype(),
                             common::kFloatingAndComplexTypes);
  return iter;
}

}  // namespace opd
