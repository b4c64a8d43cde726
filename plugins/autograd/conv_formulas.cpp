#include "autograd/conv_formulas.h"

#include <optional>
#include <vector>

namespace opd::autograd {
namespace {

std::array<bool, 3> only(int which) {
  std::array<bool, 3> m{false, false, false};
  m[static_cast<size_t>(which)] = true;
  return m;
}

Tensor backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                const ConvArgs& a, int which) {
  auto r =
      opd::convolution_backward(grad_output, input, weight, std::nullopt, a.stride, a.padding,
                                a.dilation, a.transposed, a.output_padding, a.groups, only(which));
  return which == 0 ? std::get<0>(r) : which == 1 ? std::get<1>(r) : std::get<2>(r);
}

Tensor conv(const Tensor& input, const Tensor& weight, const ConvArgs& a) {
  return opd::convolution(input, weight, std::nullopt, a.stride, a.padding, a.dilation,
                          a.transposed, a.output_padding, a.groups);
}

}  // namespace

Tensor conv_backward_input_first(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                 const ConvArgs& a, bool want_weight, bool want_bias,
                                 std::vector<Tensor>& grad_inputs, size_t weight_ix,
                                 size_t bias_ix) {
  const std::vector<int64_t> bias_sizes{grad.size(1)};
  auto [gi, gw, gb] = opd::convolution_backward(
      grad, input, weight, want_bias ? OptionalIntArrayRef(bias_sizes) : std::nullopt, a.stride,
      a.padding, a.dilation, a.transposed, a.output_padding, a.groups,
      {true, want_weight, want_bias});
  if (want_weight) grad_inputs[weight_ix] = gw;
  if (want_bias) grad_inputs[bias_ix] = gb;
  return gi;
}

Tensor conv_backward_one(const Tensor& grad, const Tensor& input, const Tensor& weight,
                         const ConvArgs& a, int which) {
  return backward(grad, input, weight, a, which);
}

Tensor conv_bias_backward(const Tensor& grad) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < grad.dim(); ++d) dims.push_back(d);
  return grad.sum(dims);
}

Tensor conv_double_backward_grad_output(const Tensor& ggI, const Tensor& ggW, const Tensor& ggb,
                                        const Tensor& grad_output, const Tensor& input,
                                        const Tensor& weight, const ConvArgs& a) {
  Tensor r;
  if (ggI.defined()) r = conv(ggI, weight, a);
  if (ggW.defined()) {
    Tensor t = conv(input, ggW, a);
    r = r.defined() ? r + t : t;
  }
  if (ggb.defined()) {
    std::vector<int64_t> shape(static_cast<size_t>(grad_output.dim()), 1);
    shape[1] = ggb.numel();
    Tensor b = ggb.reshape(shape);
    r = r.defined() ? r + b : opd::zeros_like(grad_output) + b;
  }
  return r;
}

Tensor conv_double_backward_input(const Tensor& ggW, const Tensor& grad_output, const Tensor& input,
                                  const ConvArgs& a) {
  if (!ggW.defined()) return Tensor();
  return backward(grad_output, input, ggW, a, 0);
}

Tensor conv_double_backward_weight(const Tensor& ggI, const Tensor& grad_output,
                                   const Tensor& weight, const ConvArgs& a) {
  if (!ggI.defined()) return Tensor();
  return backward(grad_output, ggI, weight, a, 1);
}

}  // namespace opd::autograd
