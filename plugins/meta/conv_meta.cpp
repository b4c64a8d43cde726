// Meta kernels of convolution and convolution_backward: the CPU kernels' checks, sizes and
// layouts (common/conv_shape.h), and no data.

#include <array>
#include <optional>
#include <tuple>

#include "common/conv_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  const common::ConvParams p = common::conv_check(input, weight, bias, stride, padding, dilation,
                                                  transposed, output_padding, groups);
  common::conv_check_dtypes(input, weight, bias);
  common::conv_check_supported_dtype(input.scalar_type(), p);
  return common::conv_empty(common::conv_output_size(input.sizes(), weight.sizes(), p), input,
                            common::conv_memory_format(input, weight, transposed));
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    OptionalIntArrayRef bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  (void)bias_sizes;
  const common::ConvParams p = common::conv_check(input, weight, std::nullopt, stride, padding,
                                                  dilation, transposed, output_padding, groups);
  common::conv_check_backward(grad_output, input, weight, p);
  common::conv_check_supported_dtype(input.scalar_type(), p);
  const MemoryFormat fmt = common::conv_memory_format(input, weight, transposed);
  Tensor gi, gw, gb;
  if (output_mask[0]) gi = common::conv_empty(input.sizes(), input, fmt);
  if (output_mask[1]) gw = common::conv_empty(weight.sizes(), weight, fmt);
  if (output_mask[2]) {
    gb = common::conv_empty({grad_output.size(1)}, grad_output, MemoryFormat::Contiguous);
  }
  return {gi, gw, gb};
}

}  // namespace opd::native
