#pragma once

// Kernels of the operators the autograd plugin serves (native_functions.yaml's Autograd section).

#include <optional>
#include <string>
#include <vector>

#include "opd/tensor.h"

namespace opd::autograd::api {

// aten::_backward: backward from `self` (a scalar unless `gradient` is given), accumulating into
// the leaves' .grad() (only into `inputs` when given).
void backward(const Tensor& self, TensorList inputs, const std::optional<Tensor>& gradient,
              std::optional<bool> retain_graph, bool create_graph);
// aten::_opd_autograd_grad (opd::autograd::grad).
std::vector<Tensor> grad(TensorList outputs, TensorList inputs, TensorList grad_outputs,
                         std::optional<bool> retain_graph, bool create_graph, bool allow_unused);
Tensor& requires_grad_(Tensor& self, bool requires_grad);
void retain_grad(Tensor& self);
bool retains_grad(const Tensor& self);
bool is_leaf_(const Tensor& self);
int64_t output_nr(const Tensor& self);
int64_t version(const Tensor& self);
Tensor detach(const Tensor& self);
Tensor grad_of(const Tensor& self);
void set_grad(Tensor& self, const std::optional<Tensor>& grad);
bool requires_grad_of(const Tensor& self);
std::string grad_fn_name(const Tensor& self);
// CompositeExplicitAutograd kernels of PyTorch's select_backward and slice_backward.
Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim,
                       int64_t index);
Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim,
                      int64_t start, int64_t end, int64_t step);

}  // namespace opd::autograd::api
