#pragma once

// convolution and convolution_backward: the argument checks, output sizes and memory formats
// every backend shares (PyTorch 1.13's ConvParams, check_shape_forward and the backends' choice
// of layout), so that CPU and Meta agree.

#include <cstdint>
#include <optional>
#include <vector>

#include "opd/layout.h"
#include "opd/tensor.h"

namespace opd::common {

// The parameters of one convolution, expanded to one value per spatial dimension.
struct ConvParams {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  int64_t dims() const { return static_cast<int64_t>(stride.size()); }
};

// PyTorch's _convolution checks, in its order: "weight should have at least three dimensions",
// "non-positive groups is not supported", each list expanded to the weight's spatial rank
// ("expected stride to be a single integer value or a list of 2 values to match the convolution
// dimensions, but got stride=[1, 1, 1]"), then check_shape_forward's texts (negative padding,
// non-positive stride or dilation, input rank against the weight's, groups against the weight,
// channels, bias size, "Calculated padded input size per channel: (5 x 5). Kernel size: (7 x 7).
// Kernel size can't be greater than actual input size") and, for transposed 2-D, the output_padding
// rule.
ConvParams conv_check(const Tensor& input, const Tensor& weight,
                      const std::optional<Tensor>& bias_opt, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, bool transposed,
                      IntArrayRef output_padding, int64_t groups);

// The dtypes PyTorch 1.13's CPU convolutions take: float, double, bfloat16; else Error
// "\"slow_conv2d_cpu\" not implemented for 'Half'" (its fallback kernel's name). Meta checks
// the dtypes as CPU does, so that both refuse the same calls.
void conv_check_supported_dtype(ScalarType t, const ConvParams& p);

// convolution_backward's checks of grad_output against the convolution `p` of input by weight:
// the convolution's output sizes and input's dtype.
void conv_check_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                         const ConvParams& p);

// The dtype checks of PyTorch 1.13's CPU backends (made after the shape checks; Meta too):
// "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same or
// input should be a MKLDNN tensor and weight is a dense tensor" (float and bfloat16 inputs),
// "expected scalar type Double but found Float" (others), "Input type (float) and bias type
// (double) should be the same".
void conv_check_dtypes(const Tensor& input, const Tensor& weight,
                       const std::optional<Tensor>& bias);

// The output sizes of the convolution of `input` (N, C, *) by `weight`.
std::vector<int64_t> conv_output_size(IntArrayRef input, IntArrayRef weight, const ConvParams& p);

// Whether a tensor's strides are channels-last (PyTorch's is_channels_last_strides_2d/3d, which
// suggest_memory_format follows).
bool suggests_channels_last(const Tensor& t);

// The layout of convolution's outputs (and of convolution_backward's grad_input and
// grad_weight), as PyTorch 1.13's CPU backends choose it: channels-last when the input or the
// weight is, for non-transposed 2-D convolutions, and when the weight is for 1-D ones (as a
// squeezed (N, C, 1, L) channels-last tensor); else contiguous (3-D ones too: 1.13's mkldnn
// path keeps channels-last only for 2-D).
MemoryFormat conv_memory_format(const Tensor& input, const Tensor& weight, bool transposed);

// A new tensor of `sizes` laid out in `format`, like `like` (dtype, device); a 3-D one in
// ChannelsLast is the squeezed 4-D one.
Tensor conv_empty(IntArrayRef sizes, const Tensor& like, MemoryFormat format);
// `t`, or a copy of it, dense in `format` (a 3-D one as conv_empty lays it out).
Tensor conv_contiguous(const Tensor& t, MemoryFormat format);

}  // namespace opd::common
