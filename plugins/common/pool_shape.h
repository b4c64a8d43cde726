#pragma once

// 2-D pooling (max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d and their backward
// operators): the argument checks, output shapes and memory formats every backend shares, in
// PyTorch 1.13's words (aten/src/ATen/native/Pool.h and the pooling meta functions).
//
// Note [Pooling layouts]
// A pooling output takes its input's suggested memory format (PyTorch's suggest_memory_format):
// channels-last when a 4-D input's strides order C fastest, then W, H, N; contiguous otherwise.
// Kernels read inputs of any strides through a contiguous copy in that format, so a plane
// (contiguous) or a pixel's channels (channels-last) is always dense.

#include <cstdint>
#include <optional>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// PyTorch's is_channels_last_strides_2d for a 4-D tensor (false for any other rank).
bool is_channels_last_2d(const Tensor& t);

// The pooled planes' geometry: `batch` planes groups of `channels` planes of in_h x in_w in,
// out_h x out_w out; batch is 1 for a 3-D input.
struct Pool2dShape {
  int64_t batch = 1, channels = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool channels_last = false;
  std::vector<int64_t> out_sizes;  // [C, OH, OW] or [N, C, OH, OW]
};

// PyTorch's pooling_output_shape: the checks of stride and pad, then the output length.
int64_t pooling_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                            bool ceil_mode);

// max_pool2d_with_indices (and its backward's shape). Throws Error "max_pool2d: kernel_size must
// either be a single int, or a tuple of two ints" (and stride, padding, dilation's), "stride
// should not be zero", "pad should be at most half of kernel size, but got pad=2 and
// kernel_size=2", "dilation should be greater than zero, ...", "non-empty 3D or 4D (batch mode)
// tensor expected for input", "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch
// size for input, but got:[1, 0, 4, 4]", "Given input size: (1x2x2). Calculated output size:
// (1x0x0). Output size is too small", and "\"max_pool2d\" not implemented for 'Long'".
Pool2dShape max_pool2d_shape(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);

// avg_pool2d: the same checks with avg_pool2d's texts, and "divisor must be not zero"; an input
// of fewer than 3 dims is an IndexError (PyTorch reads size(-3)). Float, Double, BFloat16, Long.
Pool2dShape avg_pool2d_shape(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                             IntArrayRef padding, bool ceil_mode,
                             std::optional<int64_t> divisor_override);

// The backward operators' checks of grad_output (and indices) against the forward's shape:
// Error "Expected a tensor of dimension 4 and tensor.size[2] == 2 but got: dimension 4 and
// tensor.size[2] = 3", and grad_output's dtype against self's.
void check_pool2d_backward(const Pool2dShape& s, const Tensor& self, const Tensor& grad_output,
                           const Tensor* indices);

// _adaptive_avg_pool2d. Throws Error "adaptive_avg_pool2d: output_size must be 2",
// "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]", "adaptive_avg_pool2d():
// Expected input to have non-zero size for non-batch dimensions, but input has sizes [1, 1, 0, 5]
// with dimension 2 being empty", "\"adaptive_avg_pool2d\" not implemented for 'Long'".
Pool2dShape adaptive_avg_pool2d_shape(const Tensor& self, IntArrayRef output_size);

// _adaptive_avg_pool2d_backward: the shape of grad_output's pooling, and its checks
// ("adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got [...]", the dtypes).
Pool2dShape adaptive_avg_pool2d_backward_shape(const Tensor& grad_output, const Tensor& self);

// A new tensor of `sizes` (3-D or 4-D), channels-last when asked (4-D only); see Note [Pooling
// layouts].
Tensor pool_output(IntArrayRef sizes, ScalarType dtype, Device device, bool channels_last);

}  // namespace opd::common
