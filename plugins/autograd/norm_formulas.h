#pragma once

// The normalisation operators' gradient helpers that manifests/derivatives.yaml calls
// (Operators II; PyTorch's FunctionsManual).

#include <array>
#include <cstddef>
#include <optional>
#include <tuple>
#include <vector>

#include "opd/ops.h"

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

// Note [Differentiable norm backward]
// The first backward of layer_norm, group_norm and batch_norm: their *_backward kernel, or, when
// the backward is itself recorded (create_graph), the same gradients composed of differentiable
// operators (mean, var, rsqrt, products), the statistics recomputed from the input so that they
// carry its history. Differentiating that composition gives the double backward (PyTorch writes
// layer_norm_double_backward, batchnorm_double_backward by hand; values agree to rounding).
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_formula(
    const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean,
    const Tensor& rstd, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    double eps, std::array<bool, 3> mask);

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_formula(
    const Tensor& grad, const Tensor& input, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
    double eps, std::array<bool, 3> mask);

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_formula(
    const Tensor& grad, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const Tensor& save_mean, const Tensor& save_invstd, bool training, double eps,
    std::array<bool, 3> mask);

}  // namespace opd::autograd
