#include "autograd/formulas.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opd::autograd {
namespace {

TensorOptions options_of(const Tensor& t) {
  return TensorOptions().dtype(t.scalar_type()).device(t.device());
}

Tensor as_type(const Tensor& mask, const Tensor& like) { return _to_copy(mask, options_of(like)); }

// The reduced dimensions, wrapped and sorted; all of them for none or []. None for a 0-d
// tensor, whose dim 0 or -1 names the tensor itself (PyTorch's wrap of a scalar's dimension):
// nothing to restore, and sizes has no entry to read.
std::vector<int64_t> reduced_dims(OptionalIntArrayRef dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (ndim == 0) return out;  // the forward checked the dims' range
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
  } else {
    for (int64_t d : *dims) out.push_back(maybe_wrap_dim(d, ndim));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A reduction's result with its reduced dimensions back (as size 1).
Tensor restore_reduced_dims(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  if (keepdim) return t;
  Tensor r = t;
  for (int64_t d : dims) r = r.unsqueeze(d);
  return r;
}

}  // namespace

Tensor sum_to(const Tensor& t, IntArrayRef shape) {
  if (t.sizes().equals(shape)) return t;
  const int64_t lead = t.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1 && t.size(lead + i) != 1) dims.push_back(lead + static_cast<int64_t>(i));
  }
  Tensor r = dims.empty() ? t : sum(t, IntArrayRef(dims), /*keepdim=*/true);
  return lead > 0 ? r.reshape(shape) : r;
}

Tensor maybe_multiply(const Tensor& t, const Scalar& s) {
  bool one =
      s.is_integral(false) ? s.to<int64_t>() == 1 : (!s.is_complex() && s.to<double>() == 1.0);
  return one ? t : t * s;
}

Tensor mul_tensor_backward(const Tensor& grad, const Tensor& other, ScalarType) {
  return grad * other;
}

Tensor div_tensor_self_backward(const Tensor& grad, const Tensor& other, ScalarType) {
  return grad / other;
}

Tensor div_tensor_other_backward(const Tensor& grad, const Tensor& self, const Tensor& other) {
  return -grad * self / (other * other);
}

Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent) {
  const double e = exponent.to<double>();
  if (e == 0.0) return zeros_like(self);
  return grad * (e * self.pow(e - 1));
}

Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  Tensor g = grad * (exponent * pow(self, exponent - 1));
  return where(eq(exponent, 0), zeros_like(g), g);
}

Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent,
                             const Tensor& result) {
  // 0^e for e >= 0 contributes nothing (PyTorch's convention, avoiding 0 * log 0).
  Tensor g = grad * (result * log(self));
  Tensor zero = zeros_like(g);
  return where(eq(self, 0), where(ge(exponent, 0), zero, g), g);
}

Tensor max_min_backward(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_max) {
  Tensor wins = is_max ? gt(self, other) : lt(self, other);
  Tensor zero = zeros_like(grad);
  return where(wins, grad, where(eq(self, other), grad / 2, zero));
}

Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max) {
  Tensor r = grad;
  if (min) r = where(lt(self, *min), zeros_like(grad), r);
  if (max) r = where(gt(self, *max), zeros_like(grad), r);
  return r;
}

Tensor to_copy_backward(const Tensor& grad, ScalarType self_type, Device self_device) {
  return _to_copy(grad, TensorOptions().dtype(self_type).device(self_device));
}

Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dims, bool keepdim) {
  auto ds = reduced_dims(dims, static_cast<int64_t>(sizes.size()));
  return restore_reduced_dims(grad, ds, keepdim).expand(sizes);
}

Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dims,
                     bool keepdim) {
  int64_t count = 1;
  for (int64_t d : reduced_dims(dims, static_cast<int64_t>(sizes.size()))) count *= sizes[d];
  return sum_backward(grad, sizes, dims, keepdim) / static_cast<double>(count);
}

// Note [var backward]
// d var / d x_i = 2 (x_i - mean) / (n - correction), n the count of elements reduced into each
// result. Where n == correction the factor is 2 / 0 = inf: over reduced dimensions it multiplies
// x_i - mean, giving nan where that is 0 as PyTorch's formula does; but for a 0-dim self or a
// reduction over everything (dim None) PyTorch's var_backward returns inf * grad outright (an inf
// gradient for a 0-dim x with var(x, 0), where inf * 0 would make nan). std's is var's with
// grad / (2 std), 0 where std is 0.
Tensor var_backward(const Tensor& grad, const Tensor& self, OptionalIntArrayRef dims,
                    std::optional<int64_t> correction, bool keepdim) {
  const int64_t c = correction.value_or(1);
  int64_t n = 1;
  for (int64_t d : reduced_dims(dims, self.dim())) n *= self.sizes()[d];
  Tensor g = sum_backward(grad, self.sizes(), dims, keepdim);
  if ((self.dim() == 0 || !dims) && n == c) return g * std::numeric_limits<double>::infinity();
  return g * (self - mean(self, dims, /*keepdim=*/true)) * (2.0 / static_cast<double>(n - c));
}

Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self,
                    OptionalIntArrayRef dims, std::optional<int64_t> correction, bool keepdim) {
  Tensor grad_var = where(eq(result, 0), zeros_like(grad), grad / (result * 2.0));
  return var_backward(grad_var, self, dims, correction, keepdim);
}

Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result,
                          IntArrayRef dims, bool keepdim) {
  auto ds = reduced_dims(dims, self.dim());
  Tensor mask = as_type(eq(self, restore_reduced_dims(result, ds, keepdim)), grad);
  Tensor count = ds.empty() ? mask : sum(mask, IntArrayRef(ds), /*keepdim=*/true);
  return restore_reduced_dims(grad, ds, keepdim) * mask / count;
}

Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                                          IntArrayRef sizes, bool keepdim) {
  if (sizes.empty()) return grad;
  dim = maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  Tensor g = keepdim ? grad : grad.unsqueeze(dim);
  Tensor idx = keepdim ? indices : indices.unsqueeze(dim);
  std::vector<int64_t> shape(sizes.size(), 1);
  shape[dim] = sizes[dim];
  Tensor positions =
      arange(0, sizes[dim], 1, TensorOptions().dtype(ScalarType::Int64).device(grad.device()))
          .view(shape);
  Tensor selected = eq(positions, idx);
  return where(selected, g, zeros_like(g)).expand(sizes);
}

Tensor permute_backward(const Tensor& grad, IntArrayRef dims) {
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    inverse[maybe_wrap_dim(dims[i], static_cast<int64_t>(dims.size()))] = static_cast<int64_t>(i);
  }
  return grad.permute(inverse);
}

Tensor unsqueeze_to(const Tensor& grad, int64_t dim, IntArrayRef sizes) {
  if (sizes.empty()) return grad.reshape(sizes);
  dim = maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  return sizes[dim] == 1 ? grad.unsqueeze(dim) : grad;
}

Tensor slice_backward_wrapper(const Tensor& grad, IntArrayRef sizes, int64_t dim,
                              std::optional<int64_t> start, std::optional<int64_t> end,
                              int64_t step) {
  dim = maybe_wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  const int64_t n = sizes[dim];
  auto clip = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  int64_t s = clip(start.value_or(0));
  int64_t e = clip(end.value_or(n));
  if (e < s) e = s;
  return slice_backward(grad, sizes, dim, s, e, step);
}

namespace {

// Whether elements of this geometry may share memory (PyTorch's maybe-overlapping test): with the
// dims of more than one element sorted by stride, each stride must exceed the extent of the
// smaller ones.
bool may_overlap(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return false;
    if (sizes[i] > 1) dims.emplace_back(strides[i], sizes[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t extent = 0;  // the last offset reached by the smaller dims
  for (const auto& [stride, size] : dims) {
    if (stride <= extent) return true;
    extent += (size - 1) * stride;
  }
  return false;
}

}  // namespace

// Note [as_strided backward]
// The gradient goes through a zero "storage" of the extent both geometries reach: the output's
// geometry receives grad, the input's reads it back. When output elements share memory, their
// gradients add up in the storage (index_add, which is differentiable); when input elements share
// memory, each gets its storage slot's gradient divided by how many input elements share that
// slot, as PyTorch's as_strided_backward does.
Tensor as_strided_backward(const Tensor& grad, IntArrayRef in_sizes, IntArrayRef in_strides,
                           int64_t in_offset, IntArrayRef sizes, IntArrayRef strides,
                           std::optional<int64_t> offset) {
  auto extent = [](IntArrayRef sz, IntArrayRef st, int64_t off) {
    int64_t e = off + 1;
    for (size_t i = 0; i < sz.size(); ++i) {
      if (sz[i] == 0) return int64_t{0};
      e += (sz[i] - 1) * st[i];
    }
    return e;
  };
  const int64_t out_offset = offset.value_or(in_offset);
  const int64_t n =
      std::max(extent(in_sizes, in_strides, in_offset), extent(sizes, strides, out_offset));
  const bool out_overlaps = may_overlap(sizes, strides);
  const bool in_overlaps = may_overlap(in_sizes, in_strides);
  if (!out_overlaps && !in_overlaps) {
    Tensor storage = zeros({n}, options_of(grad));
    storage.as_strided(sizes, strides, out_offset).copy_(grad);
    return storage.as_strided(in_sizes, in_strides, in_offset);
  }
  if (grad.is_meta()) return empty(in_sizes, options_of(grad));  // shapes only
  // Each element's storage slot, as a long index: an arange of the storage seen through the
  // geometry. index_add sums the gradients of elements sharing a slot, and is differentiable, so
  // this backward is too (the double backward of as_strided).
  const TensorOptions longs = TensorOptions().dtype(kLong).device(grad.device());
  auto slots = [&](IntArrayRef sz, IntArrayRef st, int64_t off) {
    return arange(0, n, 1, longs).as_strided(sz, st, off).reshape({-1});
  };
  Tensor storage = index_add(zeros({n}, options_of(grad)), 0, slots(sizes, strides, out_offset),
                             grad.reshape({-1}));
  if (in_overlaps) {
    Tensor in_slots = slots(in_sizes, in_strides, in_offset);
    Tensor sharing = index_add(zeros({n}, options_of(grad)), 0, in_slots,
                               ones({in_slots.numel()}, options_of(grad)));
    storage = storage / clamp_min(sharing, 1);
  }
  return storage.as_strided(in_sizes, in_strides, in_offset).clone(MemoryFormat::Contiguous);
}

std::vector<Tensor> cat_tensors_backward(const Tensor& grad,
                                         const std::vector<std::vector<int64_t>>& sizes,
                                         int64_t dim) {
  std::vector<Tensor> out;
  dim = maybe_wrap_dim(dim, grad.dim());
  int64_t at = 0;
  for (const auto& s : sizes) {
    // PyTorch's legacy rule: a 1-d empty tensor takes part in cat along any dimension. Its
    // gradient is an empty tensor, as torch's (undefined, grad() called it unused).
    if (s.size() == 1 && s[0] == 0) {
      out.push_back(zeros({0}, options_of(grad)));
      continue;
    }
    out.push_back(grad.slice(dim, at, at + s[dim]));
    at += s[dim];
  }
  return out;
}

Tensor softmax_double_backward(const Tensor& grad, const Tensor& grad_output, int64_t dim,
                               const Tensor& output) {
  Tensor go_dot_o = sum(grad_output * output, IntArrayRef({dim}), true);
  Tensor g_dot_o = sum(grad * output, IntArrayRef({dim}), true);
  return grad * (grad_output - go_dot_o) - grad_output * g_dot_o;
}

Tensor log_softmax_double_backward(const Tensor& grad, const Tensor& grad_output, int64_t dim,
                                   const Tensor& output) {
  return -grad * exp(output) * sum(grad_output, IntArrayRef({dim}), true);
}

Tensor gelu_double_backward(const Tensor& grad, const Tensor& grad_output, const Tensor& self,
                            std::string_view approximate) {
  const double inv_sqrt_2pi = 0.3989422804014327;
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Tensor x2 = self * self;
    Tensor u = k * (self + c * x2 * self);
    Tensor du = k * (1 + 3 * c * x2);
    Tensor d2u = (6 * k * c) * self;
    Tensor t = tanh(u);
    Tensor sech2 = 1 - t * t;
    return grad * grad_output * sech2 * (du - self * t * du * du + 0.5 * self * d2u);
  }
  // d/dx (Phi(x) + x phi(x)) = phi(x) (2 - x^2).
  Tensor x2 = self * self;
  Tensor phi = exp(x2 * -0.5) * inv_sqrt_2pi;
  return grad * grad_output * phi * (2 - x2);
}

Tensor mse_loss_double_backward_grad_output(const Tensor& grad, const Tensor& self,
                                            const Tensor& target, int64_t reduction) {
  Tensor g = 2 * (self - target) * grad;
  if (reduction == 0) return g;  // none
  Tensor s = sum(g);
  return reduction == 1 ? s / static_cast<double>(self.numel()) : s;
}

Tensor mse_loss_double_backward(const Tensor& grad, const Tensor& grad_output, int64_t reduction,
                                int64_t numel) {
  Tensor g = 2 * grad * grad_output;
  return reduction == 1 ? g / static_cast<double>(numel) : g;
}

}  // namespace opd::autograd
