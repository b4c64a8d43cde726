#pragma once

// The activation functions' gradient helpers that manifests/derivatives.yaml calls (Operators
// II; PyTorch's FunctionsManual). Written over the typed API, so they dispatch and are
// differentiable in turn.

#include "opd/ops.h"

namespace opd::autograd {

// silu's and mish's gradients: the *_backward kernel, or, when the backward itself records
// history (create_graph), the same derivative composed of differentiable operators (PyTorch's
// infinitely_differentiable_*_backward).
Tensor silu_backward_formula(const Tensor& grad, const Tensor& self);
Tensor mish_backward_formula(const Tensor& grad, const Tensor& self);

// d/dself of silu_backward(grad_output, self) and mish_backward(grad_output, self), times grad.
Tensor silu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
Tensor mish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);

// d/d(self_or_result) of elu_backward(grad_output, ...), times grad.
Tensor elu_double_backward(const Tensor& grad, const Tensor& grad_output, const Scalar& alpha,
                           const Scalar& scale, const Scalar& input_scale, bool is_result,
                           const Tensor& self_or_result);
// d/dself of softplus_backward(grad_output, self, beta, threshold), times grad.
Tensor softplus_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                                const Scalar& beta, const Scalar& threshold);
// d/dself of hardswish_backward(grad_output, self), times grad.
Tensor hardswish_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self);
// d/dself of log_sigmoid_backward(grad_output, self, buffer), times grad: -s (1 - s) with
// s = sigmoid(self).
Tensor log_sigmoid_double_backward(const Tensor& grad, const Tensor& grad_output,
                                   const Tensor& self);

}  // namespace opd::autograd
