#pragma once

// The pooling operators' gradient helpers that manifests/derivatives.yaml calls (Operators II;
// PyTorch's FunctionsManual). Written over the typed API, so they dispatch and are
// differentiable in turn.

#include "opd/ops.h"

namespace opd::autograd {

// d/dgrad_output of max_pool{1,2}d_with_indices_backward, applied to `grad` (of the input's
// shape): the element of each plane that each index names, in the indices' shape. `dim` is the
// number of pooled dims (2 for max_pool2d).
Tensor max_pool_double_backward(const Tensor& grad, const Tensor& indices, int64_t dim);

// d/dgrad_output of _adaptive_avg_pool2d_backward, applied to `grad` (of the input's shape): the
// forward pooling to grad_output's height and width.
Tensor adaptive_avg_pool2d_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes);

}  // namespace opd::autograd
