#pragma once

// The gradients of scatter_reduce.two, cumprod (inputs with zeros) and clamp.Tensor's bounds,
// and the refusals torch 1.13 makes for scatter's reduce overloads (PyTorch's FunctionsManual
// scatter_reduce_backward, cumprod_backward, clamp_backward_min_max; written over the typed API,
// so each is differentiable in turn).

#include <optional>
#include <string_view>

#include "opd/ops.h"

namespace opd::autograd {

// scatter.reduce's and scatter.value_reduce's gradient: throws NotImplementedError "derivative
// for aten::scatter is not implemented". torch 1.13 has no derivative for them and records them
// with a NotImplemented node, so the forward runs and the backward raises.
Tensor scatter_str_reduce_backward();

// scatter_reduce.two's gradients for self and src (reduce: sum, prod, mean, amax, amin). See
// Note [scatter_reduce backward] in scatter_scan_formulas.cpp.
Tensor scatter_reduce_backward_self(const Tensor& grad, const Tensor& self, int64_t dim,
                                    const Tensor& index, const Tensor& src, std::string_view reduce,
                                    bool include_self, const Tensor& result);
Tensor scatter_reduce_backward_src(const Tensor& grad, const Tensor& self, int64_t dim,
                                   const Tensor& index, const Tensor& src, std::string_view reduce,
                                   bool include_self, const Tensor& result);

// cumprod's gradient, exact where self has zeros (Note [cumprod backward with zeros]).
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);

// clamp.Tensor's gradients for self, min and max, with torch 1.13's rules at ties and where
// min > max: self gets it where min <= self <= max; min where self < min < max; max where
// self > max or max < min. REQUIRES: the bound whose gradient is asked for is given.
Tensor clamp_tensor_backward_self(const Tensor& grad, const Tensor& self,
                                  const std::optional<Tensor>& min,
                                  const std::optional<Tensor>& max);
Tensor clamp_tensor_backward_min(const Tensor& grad, const Tensor& self,
                                 const std::optional<Tensor>& min,
                                 const std::optional<Tensor>& max);
Tensor clamp_tensor_backward_max(const Tensor& grad, const Tensor& self,
                                 const std::optional<Tensor>& min,
                                 const std::optional<Tensor>& max);

}  // namespace opd::autograd
