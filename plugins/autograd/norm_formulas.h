#pragma once

// The normalisation operators' gradient helper that manifests/derivatives.yaml calls
// (Operators II).

#include <cstddef>
#include <tuple>
#include <vector>

#include "opd/tensor.h"

namespace opd::autograd {

// Note [One backward call for input, weight and bias]
// PyTorch gives native_layer_norm, native_group_norm and native_batch_norm one formula for the
// three inputs: one *_backward call with grad_input_mask. An opd-gen formula is one expression
// for one input, so the input's formula makes that one call with the node's mask and hands its
// result here: the weight's and bias's gradients go to grad_inputs (their own formulas then take
// them from there, and call the backward themselves only when the input's gradient is not
// wanted), and the input's is returned.
Tensor take_input_grad(std::tuple<Tensor, Tensor, Tensor> grads, std::vector<Tensor>& grad_inputs,
                       size_t weight_ix, size_t bias_ix);

}  // namespace opd::autograd
