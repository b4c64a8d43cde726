#pragma once

// reflection_pad{1,2}d and replication_pad{1,2}d (and their backward operators): the checks,
// output shapes and dtypes every backend shares, in PyTorch 1.13's words. Outputs are
// contiguous (PyTorch's, whatever the input's layout).

#include <cstdint>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

enum class PadMode { Reflect, Replicate };

// The padded dims' geometry: `planes` planes of in_h x in_w become out_h x out_w, with pad_t
// rows and pad_l columns before (negative: cropped). 1-D padding has in_h = out_h = 1.
struct PadShape {
  int64_t planes = 0, in_h = 1, in_w = 0, out_h = 1, out_w = 0, pad_t = 0, pad_l = 0;
  std::vector<int64_t> out_sizes;
};

// `dims` is 1 or 2; `op` names the operator ("reflection_pad2d"). Throws Error "padding size is
// expected to be 4", "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other
// non-zero dimensions for input, but got: [2, 3, 0, 4]", "Argument #4: Padding size should be
// less than the corresponding input dimension, but got: padding (4, 1) at dimension 2 of input
// [2, 3, 4]" (reflect), "input (W: 4) is too small. Calculated output W: -1", and the dtype
// error of PyTorch's kernel ("\"reflection_pad2d\" not implemented for 'Long'").
PadShape pad_shape(PadMode mode, int dims, const Tensor& self, IntArrayRef padding);

// The backward's: the forward's checks, then grad_output's sizes against the output's: Error
// "gradOutput width unexpected. Expected: 7, Got: 5" (and height), grad_output's dtype.
PadShape pad_backward_shape(PadMode mode, int dims, const Tensor& grad_output, const Tensor& self,
                            IntArrayRef padding);

}  // namespace opd::common
