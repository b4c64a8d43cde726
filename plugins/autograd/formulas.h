#pragma once

// Helpers that manifests/derivatives.yaml's formulas call (PyTorch's FunctionsManual). Each is
// written over the typed API, so it dispatches and is differentiable in turn.

#include <optional>
#include <string_view>
#include <vector>

#include "opd/ops.h"

namespace opd::autograd {

// `t` summed over the dimensions broadcasting added or expanded, to `shape`.
Tensor sum_to(const Tensor& t, IntArrayRef shape);
// t * s, or t itself when s is 1.
Tensor maybe_multiply(const Tensor& t, const Scalar& s);
Tensor mul_tensor_backward(const Tensor& grad, const Tensor& other, ScalarType self_type);
Tensor div_tensor_self_backward(const Tensor& grad, const Tensor& other, ScalarType self_type);
Tensor div_tensor_other_backward(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent);
Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent);
Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent,
                             const Tensor& result);
// Gradient of maximum (is_max) or minimum for `self` against `other`: all of it where self wins,
// half where they tie.
Tensor max_min_backward(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max);
Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max);
Tensor to_copy_backward(const Tensor& grad, ScalarType self_type, Device self_device);
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dims, bool keepdim);
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dims, bool keepdim);
// var.correction / std.correction (Note [var backward] in formulas.cpp); `result` is std's.
Tensor var_backward(const Tensor& grad, const Tensor& self, OptionalIntArrayRef dims,
                    std::optional<int64_t> correction, bool keepdim);
Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self,
                    OptionalIntArrayRef dims, std::optional<int64_t> correction, bool keepdim);
// amax/amin: the gradient split evenly between the elements equal to the extremum.
Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result,
                          IntArrayRef dims, bool keepdim);
// max.dim: the gradient goes to the selected index.
Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                                          IntArrayRef sizes, bool keepdim);
Tensor permute_backward(const Tensor& grad, IntArrayRef dims);
Tensor unsqueeze_to(const Tensor& grad, int64_t dim, IntArrayRef sizes);
Tensor slice_backward_wrapper(const Tensor& grad, IntArrayRef sizes, int64_t dim,
                              std::optional<int64_t> start, std::optional<int64_t> end,
                              int64_t step);
// as_strided's input gradient, for any geometries (Note [as_strided backward]).
Tensor as_strided_backward(const Tensor& grad, IntArrayRef in_sizes, IntArrayRef in_strides,
                           int64_t in_offset, IntArrayRef sizes, IntArrayRef strides,
                           std::optional<int64_t> offset);
std::vector<Tensor> cat_tensors_backward(const Tensor& grad,
                                         const std::vector<std::vector<int64_t>>& sizes,
                                         int64_t dim);
Tensor softmax_double_backward(const Tensor& grad, const Tensor& grad_output, int64_t dim,
                               const Tensor& output);
Tensor log_softmax_double_backward(const Tensor& grad, const Tensor& grad_output, int64_t dim,
                                   const Tensor& output);
Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            std::string_view approximate);
Tensor mse_loss_double_backward_grad_output(const Tensor& grad, const Tensor& self,
                                            const Tensor& target, int64_t reduction);
Tensor mse_loss_double_backward(const Tensor& grad, const Tensor& grad_output, int64_t reduction,
                                int64_t numel);

}  // namespace opd::autograd
