#pragma once

// The padding operators' gradient helpers that manifests/derivatives.yaml calls (Operators II;
// PyTorch's FunctionsManual). Written over the typed API, so they dispatch and are
// differentiable in turn.

#include "opd/ops.h"

namespace opd::autograd {

// constant_pad_nd's gradient: grad cropped back to the input (the same padding, negated).
Tensor constant_pad_nd_backward(const Tensor& grad, IntArrayRef pad);

}  // namespace opd::autograd
