// Elementwise operators on Meta: the shared metadata step (common/elementwise.h) and nothing
// else, so shapes, dtypes and errors are those of the CPU kernels. The structured operators'
// (add, sub, mul, div, the comparisons, remainder...) are generated from their meta functions
// (Note [Structured kernels]).

#include "common/elementwise.h"
#include "opd/error.h"
#include "opd/native/Meta.h"
#include "opd/ops.h"

namespace opd::native {
namespace {

using common::TensorIterator;

Tensor& in_place(const TensorIterator&, Tensor& self) {
  self.bump_version();
  return self;
}

}  // namespace

Tensor pow_Tensor_Scalar(const Tensor& self, const Scalar& exponent) {
  return common::pow_meta(Tensor(), self, exponent).output();
}
Tensor pow_Tensor_Tensor(const Tensor& self, const Tensor& exponent) {
  return common::pow_meta(Tensor(), self, exponent).output();
}
Tensor maximum(const Tensor& self, const Tensor& other) {
  return common::min_max_meta("maximum", Tensor(), self, other).output();
}
Tensor minimum(const Tensor& self, const Tensor& other) {
  return common::min_max_meta("minimum", Tensor(), self, other).output();
}

Tensor where_self(const Tensor& condition, const Tensor& self, const Tensor& other) {
  return common::where_meta(Tensor(), condition, self, other).output();
}

Tensor neg(const Tensor& self) { return common::neg_meta(Tensor(), self).output(); }
Tensor abs(const Tensor& self) { return common::abs_meta(Tensor(), self).output(); }
Tensor exp(const Tensor& self) { return common::unary_float_meta("exp", Tensor(), self).output(); }
Tensor log(const Tensor& self) { return common::unary_float_meta("log", Tensor(), self).output(); }
Tensor sqrt(const Tensor& self) {
  return common::unary_float_meta("sqrt", Tensor(), self).output();
}
Tensor rsqrt(const Tensor& self) {
  return common::unary_float_meta("rsqrt", Tensor(), self).output();
}
Tensor sin(const Tensor& self) { return common::unary_float_meta("sin", Tensor(), self).output(); }
Tensor cos(const Tensor& self) { return common::unary_float_meta("cos", Tensor(), self).output(); }
Tensor tanh(const Tensor& self) {
  return common::unary_float_meta("tanh", Tensor(), self).output();
}
Tensor sigmoid(const Tensor& self) {
  return common::unary_float_meta("sigmoid", Tensor(), self).output();
}
Tensor relu(const Tensor& self) { return common::relu(self); }
Tensor& relu_(Tensor& self) { return common::relu_(self); }

Tensor gelu(const Tensor& self, std::string_view approximate) {
  return common::gelu_meta(Tensor(), self, approximate).output();
}
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max) {
  return common::clamp_meta(Tensor(), self, min, max).output();
}

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  return common::threshold_backward_meta(Tensor(), grad_output, self, threshold).output();
}
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  return common::pointwise_backward_meta("sigmoid_backward", "sigmoid_backward_cpu", Tensor(),
                                         grad_output, output)
      .output();
}
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  return common::pointwise_backward_meta("tanh_backward", "tanh_backward_cpu", Tensor(),
                                         grad_output, output)
      .output();
}
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  common::gelu_approximation(approximate);
  return common::pointwise_backward_meta("gelu_backward", "GeluBackwardKernelImpl", Tensor(),
                                         grad_output, self, common::kGeluTypes)
      .output();
}

// Reached when either tensor is on Meta (Meta has the highest backend priority). Meta self:
// checked, nothing moved. Meta src into a tensor with memory: refused by copy_meta.
Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  common::copy_meta(self, src);
  self.bump_version();
  return self;
}

Tensor& fill__Scalar(Tensor& self, const Scalar& value) {
  return in_place(common::fill_meta(self, value), self);
}

}  // namespace opd::native
