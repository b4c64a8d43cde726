#include "autograd/activation_formulas.h"

#include "opd/autograd.h"

namespace opd::autograd {

Tensor silu_backward_formula(const Tensor& grad, const Tensor& self) {
  if (!is_grad_enabled()) return silu_backward(grad, self);
  Tensor s = sigmoid(self);
  return grad * s * (1 + self * (1 - s));
}

Tensor mish_backward_formula(const Tensor& grad, const Tensor& self) {
  if (!is_grad_enabled()) return mish_backward(grad, self);
  Tensor t = tanh(softplus(self));
  return grad * (t + self * sigmoid(self) * (1 - t * t));
}

// silu'' = s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x).
Tensor silu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = sigmoid(self);
  return grad * grad_output * s * (1 - s) * (2 + self * (1 - 2 * s));
}

// mish'' = (1 - t^2) s (2 + x (1 - s) - 2 x s t), t = tanh(softplus(x)), s = sigmoid(x).
Tensor mish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self) {
  Tensor s = sigmoid(self);
  Tensor t = tanh(softplus(self));
  return grad * grad_output * (1 - t * t) * s * (2 + self * (1 - s) - 2 * self * s * t);
}

// The negative branch only: the positive one is linear. From the output (is_result), the
// derivative input_scale (y + alpha scale) has slope input_scale in y.
Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const Scalar& alpha,
                           const Scalar& scale, const Scalar& input_scale, bool is_result,
                           const Tensor& self_or_result) {
  Tensor negative = le(self_or_result, 0).to(grad.scalar_type());
  const double in = input_scale.to<double>();
  if (is_result) return grad * grad_output * in * negative;
  return elu_backward(grad * grad_output * in, alpha, scale, input_scale, false, self_or_result) *
         negative;
}

Tensor softplus_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                                const Scalar& beta, const Scalar& threshold) {
  const double b = beta.to<double>();
  Tensor bx = self * b;
  Tensor s = sigmoid(bx);
  return where(gt(bx, threshold), zeros_like(grad), grad * grad_output * b * s * (1 - s));
}

Tensor hardswish_double_backward(const Tensor& grad, const Tensor& grad_output,
                                 const Tensor& self) {
  Tensor inside = logical_and(gt(self, -3), lt(self, 3));
  return where(inside, grad * grad_output / 3, zeros_like(grad));
}

Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output,
                                   const Tensor& self) {
  Tensor s = sigmoid(self);
  return grad * grad_output * s * (s - 1);
}

}  // namespace opd::autograd
