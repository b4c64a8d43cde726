#include "autograd/scatter_scan_formulas.h"

#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/kernel_support.h"
#include "autograd/node.h"
#include "opd/autograd.h"
#include "opd/error.h"

namespace opd::autograd {
namespace {

TensorOptions options_of(const Tensor& t) {
  return TensorOptions().dtype(t.scalar_type()).device(t.device());
}

Tensor as_type(const Tensor& mask, const Tensor& like) { return _to_copy(mask, options_of(like)); }

Tensor reversed_cumsum(const Tensor& t, int64_t dim) {
  return flip(cumsum(flip(t, IntArrayRef({dim})), dim), IntArrayRef({dim}));
}

// src's part that index addresses (a scatter reads src only there): its gradient has index's
// shape, and the engine refuses it for a larger src, as torch's does.
Tensor addressed_part(const Tensor& src, const Tensor& index) {
  Tensor out = src;
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (out.size(d) != index.size(d)) out = narrow(out, d, 0, index.size(d));
  }
  return out;
}

// A node that raises when the backward pass reaches it (PyTorch's DelayedError): a gradient
// whose own derivative is not implemented.
class DelayedError final : public Node {
 public:
  explicit DelayedError(std::string message) : message_(std::move(message)) {}
  std::string name() const override { return "Error"; }

 protected:
  variable_list apply(variable_list&&) override { throw Error(message_); }

 private:
  std::string message_;
};

Tensor delayed_error(const Tensor& t, std::string message) {
  if (!requires_grad(t)) return t;
  auto node = make_node<DelayedError>(std::move(message));
  node->set_next_edges(collect_next_edges(t));
  Tensor out = [&] {
    NoGradGuard no_grad;
    return clone(t);
  }();
  set_history(out, node);
  return out;
}

}  // namespace

Tensor scatter_str_reduce_backward() { throw_not_implemented("aten::scatter"); }

// Note [scatter_reduce backward]
// For each element p of the result, the reduction runs over self[p] (with include_self) and the
// src elements whose index sends them to p. sum and mean hand grad[p] (divided by the count for
// mean) to each of them. amax/amin split it evenly between the ones equal to the result; where
// include_self is false a scattered-to self[p] is not among them (torch 1.13 counts it when it
// happens to equal the result and then drops its share: the shares no longer add up to grad[p];
// this follows the mathematics). prod: self[p]'s gradient is grad[p] times the product of its
// srcs (no division, so zeros are exact); a src's is grad[p] * result[p] / src where src != 0,
// and where src is the only zero sent to p, grad[p] times the product of the others (the
// reduction again with that zero read as one). Where two or more zeros meet at p, every src's
// gradient there is zero, and its own derivative (double backward) is refused as torch 1.13
// refuses it.
Tensor scatter_reduce_backward_self(const Tensor& grad, const Tensor& self, int64_t dim,
                                    const Tensor& index, const Tensor& src, std::string_view reduce,
                                    bool include_self, const Tensor& result) {
  Tensor g;
  if (reduce == "sum") {
    g = grad;
  } else if (reduce == "prod") {
    g = grad * scatter_reduce(ones_like(grad), dim, index, addressed_part(src, index), "prod");
  } else if (reduce == "mean") {
    Tensor n = scatter_add(include_self ? ones_like(grad) : zeros_like(grad), dim, index,
                           ones(index.sizes(), options_of(grad)));
    g = grad / masked_fill(n, eq(n, Scalar(0)), Scalar(1));
  } else if (reduce == "amax" || reduce == "amin") {
    Tensor value = gather(result, dim, index);
    Tensor self_is = as_type(eq(self, result), grad);
    if (!include_self) self_is = scatter(self_is, dim, index, Scalar(0));
    Tensor count =
        scatter_add(self_is, dim, index, as_type(eq(addressed_part(src, index), value), grad));
    g = self_is * (grad / count);
  } else {
    OPD_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got {}",
              reduce);
  }
  return include_self ? g : scatter(g, dim, index, Scalar(0));
}

Tensor scatter_reduce_backward_src(const Tensor& grad, const Tensor& self, int64_t dim,
                                   const Tensor& index, const Tensor& src, std::string_view reduce,
                                   bool include_self, const Tensor& result) {
  const Tensor s = addressed_part(src, index);
  if (reduce == "sum") return gather(grad, dim, index);
  if (reduce == "mean") {
    Tensor n = scatter_add(include_self ? ones_like(grad) : zeros_like(grad), dim, index,
                           ones(index.sizes(), options_of(grad)));
    return gather(grad / masked_fill(n, eq(n, Scalar(0)), Scalar(1)), dim, index);
  }
  if (reduce == "amax" || reduce == "amin") {
    Tensor value = gather(result, dim, index);
    Tensor self_is = as_type(eq(self, result), grad);
    if (!include_self) self_is = scatter(self_is, dim, index, Scalar(0));
    Tensor src_is = as_type(eq(s, value), grad);
    Tensor count = scatter_add(self_is, dim, index, src_is);
    return src_is * gather(grad / count, dim, index);
  }
  OPD_CHECK(reduce == "prod",
            "reduce argument must be either sum, prod, mean, amax or amin, got {}", reduce);
  Tensor is_zero = eq(s, Scalar(0));
  Tensor zeros_at =
      gather(scatter_add(zeros_like(grad), dim, index, as_type(is_zero, grad)), dim, index);
  Tensor only_zero = logical_and(is_zero, eq(zeros_at, Scalar(1)));
  Tensor others =
      scatter_reduce(self, dim, index, masked_fill(s, only_zero, Scalar(1)), "prod", include_self);
  Tensor g = where(only_zero, gather(grad * others, dim, index),
                   gather(grad * result, dim, index) / masked_fill(s, is_zero, Scalar(1)));
  if (is_grad_enabled() && any(gt(zeros_at, Scalar(1))).item<bool>()) {
    return delayed_error(g,
                         "scatter_reduce(): Double backward is unsupported for src when >1 zeros "
                         "in src are scattered to the same position in self");
  }
  return g;
}

// Note [cumprod backward with zeros]
// With y = cumprod(x) along dim, dL/dx_k = sum_{i >= k} g_i * prod_{j <= i, j != k} x_j. Where
// x_k != 0 that is reversed_cumsum(g * y)_k / x_k, an identity in a neighbourhood of x, so it
// stays exact under further differentiation (y carries its own history). Where x_k == 0 it is
// reversed_cumsum(g * cumprod(x with x_k read as one))_k. Each line's first zero gets that
// (one cumprod for all lines); a later zero's gradient is zero, but its derivative with respect
// to the earlier zeros is not, so with grad mode on (create_graph) the m-th zeros of every line
// get their own cumprod, m = 2, 3, ... as PyTorch's O(n^2) double-backward path gives them.
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result) {
  if (self.dim() == 0 || self.numel() <= 1) return grad;
  dim = maybe_wrap_dim(dim, self.dim());
  const Tensor x = self.scalar_type() == grad.scalar_type() ? self : as_type(self, grad);
  const Tensor is_zero = eq(x, Scalar(0));
  if (!any(is_zero).item<bool>()) return reversed_cumsum(grad * result, dim) / x;
  Tensor out = where(is_zero, Scalar(0),
                     reversed_cumsum(grad * result, dim) / masked_fill(x, is_zero, Scalar(1)));
  const Tensor rank = cumsum(is_zero, dim);
  const int64_t ranks = is_grad_enabled() ? max(rank).item<int64_t>() : 1;
  for (int64_t m = 1; m <= ranks; ++m) {
    Tensor mth = logical_and(is_zero, eq(rank, Scalar(m)));
    out =
        where(mth, reversed_cumsum(grad * cumprod(masked_fill(x, mth, Scalar(1)), dim), dim), out);
  }
  return out;
}

Tensor clamp_tensor_backward_self(const Tensor& grad, const Tensor& self,
                                  const std::optional<Tensor>& min,
                                  const std::optional<Tensor>& max) {
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  if (!has_min && !has_max) return grad;
  Tensor keep = has_min ? ge(self, *min) : le(self, *max);
  if (has_min && has_max) keep = logical_and(keep, le(self, *max));
  return where(keep, grad, Scalar(0));
}

Tensor clamp_tensor_backward_min(const Tensor& grad, const Tensor& self,
                                 const std::optional<Tensor>& min,
                                 const std::optional<Tensor>& max) {
  Tensor takes = lt(self, *min);
  if (max && max->defined()) takes = logical_and(takes, lt(*min, *max));
  return where(takes, grad, Scalar(0));
}

Tensor clamp_tensor_backward_max(const Tensor& grad, const Tensor& self,
                                 const std::optional<Tensor>& min,
                                 const std::optional<Tensor>& max) {
  Tensor takes = gt(self, *max);
  if (min && min->defined()) takes = logical_or(takes, lt(*max, *min));
  return where(takes, grad, Scalar(0));
}

}  // namespace opd::autograd
