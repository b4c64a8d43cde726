#pragma once

// upsample_nearest2d and upsample_bilinear2d (and their backward operators): the checks, output
// shapes and layouts every backend shares, in PyTorch 1.13's words (aten/src/ATen/native/
// UpSample.h). Outputs take the input's (grad_output's) suggested memory format, as the pooling
// outputs do (Note [Pooling layouts] in common/pool_shape.h).

#include <cstdint>
#include <optional>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// PyTorch's upsample_2d_common_check: [N, C, OH, OW] from input_size [N, C, H, W] and
// output_size [OH, OW]. Throws Error "It is expected output_size equals to 2, but got size 3",
// "It is expected input_size equals to 4, but got size 3", "Input and output sizes should be
// greater than 0, but got input (H: 3, W: 3) output (H: 0, W: 5)".
std::vector<int64_t> upsample_2d_output_sizes(IntArrayRef input_size, IntArrayRef output_size);

// The forward's checks: the common check, then Error "Non-empty 4D data tensor expected but got a
// tensor with sizes [1, 0, 3, 3]", then the dtype (`dtype_name` names PyTorch's kernel,
// "compute_indices_weights_nearest"; `with_byte` adds Byte). Returns the output's sizes.
std::vector<int64_t> upsample_2d_meta(const Tensor& input, IntArrayRef output_size,
                                      const char* dtype_name, bool with_byte);

// The backward's checks: the common check of input_size and output_size, then grad_output's
// shape: Error "Expected grad_output to be a tensor of dimension 4 but got: dimension 3",
// "Expected grad_output to have the same shape as output; output.size(2) = 5 but got
// grad_output.size(2) = 4", and its dtype (`op` names the kernel).
void upsample_2d_backward_meta(const Tensor& grad_output, IntArrayRef output_size,
                               IntArrayRef input_size, const char* op);

}  // namespace opd::common
