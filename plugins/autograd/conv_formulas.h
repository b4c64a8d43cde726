#pragma once

// Convolution's gradient helpers that manifests/derivatives.yaml calls (PyTorch's
// FunctionsManual: convolution_backward's outputs one at a time, and
// _convolution_double_backward), over the typed API so that they are differentiable in turn.

#include <array>
#include <cstddef>
#include <vector>

#include "opd/ops.h"

namespace opd::autograd {

// The parameters of a convolution, as convolution's schema lists them.
struct ConvArgs {
  IntArrayRef stride, padding, dilation;
  bool transposed;
  IntArrayRef output_padding;
  int64_t groups;
};

// The input's gradient of convolution(input, weight, bias), from one convolution_backward call
// that also computes the weight's and bias's gradients where `want_weight` and `want_bias` ask
// for them, stored in grad_inputs[weight_ix] and grad_inputs[bias_ix] for their formulas (as
// PyTorch's one `input, weight, bias:` formula; oneDNN gets the bias gradient from the weight
// gradient's pass).
Tensor conv_backward_input_first(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                 const ConvArgs& a, bool want_weight, bool want_bias,
                                 std::vector<Tensor>& grad_inputs, size_t weight_ix,
                                 size_t bias_ix);
// One gradient of convolution(input, weight, bias): output_mask has only `which` set.
Tensor conv_backward_one(const Tensor& grad, const Tensor& input, const Tensor& weight,
                         const ConvArgs& a, int which);
// bias's gradient: grad summed over every dimension but the channels (1).
Tensor conv_bias_backward(const Tensor& grad);

// Note [Convolution double backward]
// convolution is bilinear in (input, weight), and convolution_backward's outputs are its
// adjoints: with gI = grad_input(gO, W), gW = grad_weight(gO, I), gb = sum(gO), and the
// incoming gradients ggI, ggW, ggb (any may be undefined),
//   <ggI, gI> + <ggW, gW> + <ggb, gb> = <gO, conv(ggI, W) + conv(I, ggW) + ggb>,
// so gO's gradient is that sum; W's is grad_weight(gO, ggI) and I's grad_input(gO, ggW),
// each one convolution_backward call (for a transposed convolution too: the same identities
// hold with its own convolution). PyTorch's _convolution_double_backward computes the same.
Tensor conv_double_backward_grad_output(const Tensor& ggI, const Tensor& ggW, const Tensor& ggb,
                                        const Tensor& grad_output, const Tensor& input,
                                        const Tensor& weight, const ConvArgs& a);
Tensor conv_double_backward_input(const Tensor& ggW, const Tensor& grad_output, const Tensor& input,
                                  const ConvArgs& a);
Tensor conv_double_backward_weight(const Tensor& ggI, const Tensor& grad_output,
                                   const Tensor& weight, const ConvArgs& a);

}  // namespace opd::autograd
