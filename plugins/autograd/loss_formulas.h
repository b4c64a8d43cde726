#pragma once

// The losses' gradient helpers that manifests/derivatives.yaml calls (Operators II; PyTorch's
// FunctionsManual). Written over the typed API, so they dispatch and are differentiable in turn.

#include <cstdint>
#include <optional>

#include "opd/ops.h"

namespace opd::autograd {

// d/dtarget of binary_cross_entropy, times grad: -logit(self) = log(1 - self) - log(self),
// times weight, divided by numel for mean.
Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self,
                                            const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction);

}  // namespace opd::autograd
