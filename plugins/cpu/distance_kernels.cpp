// CPU kernels of _cdist_forward, _cdist_backward, _pdist_forward and _pdist_backward: p-norm
// distances between rows, each output row computed by one task of the thread pool.
//
// Note [Distance norms]
// The distance of rows a and b is ||a - b||_p; p = 0 counts the differing columns, p = inf takes
// the largest |a - b|. Its gradient with respect to a is, per column with d = a - b and distance
// r, what PyTorch's DistanceOpsKernel.cpp computes (and its subgradient choices at 0):
//   p = 0: 0;  p = 1: sign(d);  p = 2: d / r (0 where r = 0);  p = inf: sign(d) where |d| = r;
//   p < 2: sign(d) |d|^(p-1) / r^(p-1) (0 where r = 0, or d = 0 with p < 1);
//   else: d |d|^(p-2) / r^(p-1) (0 where r = 0).
// The gradient with respect to b is its negation, so one function serves both sides: the x2
// gradient of cdist is the x1 gradient with the roles swapped, and a pdist row sums over both.

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/distance_shape.h"
#include "common/output.h"
#include "common/type_dispatch.h"
#include "cpu/parallel.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

template <class T>
T sign(T v) {
  return static_cast<T>((T(0) < v) - (v < T(0)));
}

// sum over k of f(a[k] - b[k]), in kLanes independent partial sums (the compiler's SLP
// vectoriser makes them one vector register; the order of the additions is not torch's, whose
// Vectorized loop also keeps lanes).
constexpr int kLanes = 8;
template <class T, class F>
T lane_sum(const T* a, const T* b, int64_t m, F f) {
  T acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= m; k += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += f(a[k + l] - b[k + l]);
  }
  T s = 0;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  for (; k < m; ++k) s += f(a[k] - b[k]);
  return s;
}

// One p-norm (Note [Distance norms]).
template <class T>
struct Norm {
  double p;

  T distance(const T* a, const T* b, int64_t m) const {
    if (p == 0) return lane_sum(a, b, m, [](T d) { return static_cast<T>(d != T(0)); });
    if (p == 1) return lane_sum(a, b, m, [](T d) { return std::abs(d); });
    if (p == 2) return std::sqrt(lane_sum(a, b, m, [](T d) { return d * d; }));
    if (std::isinf(p)) {
      T s = 0;
      for (int64_t k = 0; k < m; ++k) {
        const T d = std::abs(a[k] - b[k]);
        s = (d > s || std::isnan(d)) ? d : s;
      }
      return s;
    }
    const T pt = static_cast<T>(p);
    return std::pow(lane_sum(a, b, m, [pt](T d) { return std::pow(std::abs(d), pt); }), T(1) / pt);
  }

  // out += g * d(distance(a, b))/da, where r = distance(a, b).
  void accumulate_grad(T* out, const T* a, const T* b, int64_t m, T g, T r) const {
    if (p == 0) return;
    if (p == 1) {
      for (int64_t k = 0; k < m; ++k) out[k] += g * sign(a[k] - b[k]);
    } else if (p == 2) {
      if (r == 0) return;
      for (int64_t k = 0; k < m; ++k) out[k] += g * (a[k] - b[k]) / r;
    } else if (std::isinf(p)) {
      for (int64_t k = 0; k < m; ++k) {
        const T d = a[k] - b[k];
        out[k] += g * sign(d) * static_cast<T>(std::abs(d) == r);
      }
    } else if (p < 2) {
      if (r == 0) return;
      const T pt = static_cast<T>(p);
      const T scale = g / std::pow(r, pt - 1);
      for (int64_t k = 0; k < m; ++k) {
        const T d = a[k] - b[k];
        if (d == 0 && p < 1) continue;
        out[k] += sign(d) * std::pow(std::abs(d), pt - 1) * scale;
      }
    } else {
      if (r == 0) return;
      const T pt = static_cast<T>(p);
      const T scale = g / std::pow(r, pt - 1);
      for (int64_t k = 0; k < m; ++k) {
        const T d = a[k] - b[k];
        out[k] += d * std::pow(std::abs(d), pt - 2) * scale;
      }
    }
  }
};

// Rows per task: about 64K column operations each.
int64_t row_grain(int64_t work_per_row) {
  return std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, work_per_row));
}

// Index of the pair (i, j), i < j, of n rows in pdist's order (row-major upper triangle).
int64_t pair_index(int64_t i, int64_t j, int64_t n) {
  return i * (2 * n - i - 1) / 2 + (j - i - 1);
}

}  // namespace

Tensor _cdist_forward(const Tensor& x1, const Tensor& x2, double p,
                      std::optional<int64_t> compute_mode) {
  const common::CdistGeometry g = common::cdist_geometry(x1, x2, p, compute_mode);
  if (g.r1 == 0 || g.r2 == 0 || g.batch == 0) {
    return common::empty_output(g.output_sizes, x1.scalar_type(), x1.device());
  }
  if (g.c == 0)
    return opd::zeros(IntArrayRef(g.output_sizes), x1.scalar_type(), std::nullopt, x1.device(),
                      std::nullopt);
  const Tensor a = x1.expand(g.x1_sizes).contiguous();
  const Tensor b = x2.expand(g.x2_sizes).contiguous();
  if (common::cdist_uses_mm(p, compute_mode, g.r1, g.r2)) {
    // PyTorch's cdist_impl: matrix products, differentiated as _euclidean_dist is.
    const Tensor a3 = a.view({g.batch, g.r1, g.c});
    const Tensor b3 = b.view({g.batch, g.r2, g.c});
    return opd::_euclidean_dist(a3, b3).view(g.output_sizes);
  }
  Tensor result = common::empty_output(g.output_sizes, x1.scalar_type(), x1.device());
  const int64_t r1 = g.r1, r2 = g.r2, c = g.c;
  OPD_DISPATCH_FLOATING_TYPES(x1.scalar_type(), "cdist", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    scalar_t* out = result.data_ptr<scalar_t>();
    const Norm<scalar_t> norm{p};
    cpu::parallel_for(0, g.batch * r1, row_grain(r2 * c), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t batch = row / r1;
        const scalar_t* ra = pa + row * c;
        const scalar_t* rb = pb + batch * r2 * c;
        for (int64_t j = 0; j < r2; ++j) out[row * r2 + j] = norm.distance(ra, rb + j * c, c);
      }
    });
  });
  return result;
}

Tensor _cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                       const Tensor& cdist) {
  common::cdist_check(x1, x2);
  const common::CdistGeometry g = common::cdist_geometry(x1, x2, p, std::nullopt);
  if (g.r1 == 0 || g.r2 == 0 || g.c == 0 || g.batch == 0) {
    return opd::zeros_like(x1);
  }
  common::cdist_backward_check(grad, x1, cdist, g);
  const Tensor a = x1.expand(g.x1_sizes).contiguous();
  const Tensor b = x2.expand(g.x2_sizes).contiguous();
  const Tensor dist = cdist.contiguous();
  const Tensor gr = grad.contiguous();
  Tensor result = opd::zeros(IntArrayRef(g.x1_sizes), x1.scalar_type(), std::nullopt, x1.device(),
                             std::nullopt);
  const int64_t r1 = g.r1, r2 = g.r2, c = g.c;
  OPD_DISPATCH_FLOATING_TYPES(x1.scalar_type(), "cdist_backward", [&] {
    const scalar_t* pa = a.data_ptr<scalar_t>();
    const scalar_t* pb = b.data_ptr<scalar_t>();
    const scalar_t* pd = dist.data_ptr<scalar_t>();
    const scalar_t* pg = gr.data_ptr<scalar_t>();
    scalar_t* out = result.data_ptr<scalar_t>();
    const Norm<scalar_t> norm{p};
    cpu::parallel_for(0, g.batch * r1, row_grain(r2 * c), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t batch = row / r1;
        const scalar_t* rb = pb + batch * r2 * c;
        for (int64_t j = 0; j < r2; ++j) {
          norm.accumulate_grad(out + row * c, pa + row * c, rb + j * c, c, pg[row * r2 + j],
                               pd[row * r2 + j]);
        }
      }
    });
  });
  return result;
}

Tensor _pdist_forward(const Tensor& self, double p) {
  const std::vector<int64_t> sizes = common::pdist_sizes(self);
  const int64_t n = self.size(0), m = self.size(1);
  if (sizes[0] == 0) return common::empty_output(sizes, self.scalar_type(), self.device());
  if (m == 0)
    return opd::zeros(IntArrayRef(sizes), self.scalar_type(), std::nullopt, self.device(),
                      std::nullopt);
  Tensor result = common::empty_output(sizes, self.scalar_type(), self.device());
  OPD_DISPATCH_FLOATING_TYPES(self.scalar_type(), "pdist", [&] {
    const scalar_t* x = self.data_ptr<scalar_t>();
    scalar_t* out = result.data_ptr<scalar_t>();
    const Norm<scalar_t> norm{p};
    // Row i has n - 1 - i pairs: task t takes rows t and n - 1 - t, so that equal ranges of
    // tasks are equal work.
    cpu::parallel_for(0, (n + 1) / 2, row_grain(n * m), [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t rows[2] = {t, n - 1 - t};
        for (int64_t r = 0; r < (rows[0] == rows[1] ? 1 : 2); ++r) {
          const int64_t i = rows[r];
          for (int64_t j = i + 1; j < n; ++j) {
            out[pair_index(i, j, n)] = norm.distance(x + i * m, x + j * m, m);
          }
        }
      }
    });
  });
  return result;
}

Tensor _pdist_backward(const Tensor& grad, const Tensor& self, double p, const Tensor& pdist) {
  common::pdist_backward_check(grad, self, pdist);
  const int64_t n = self.size(0), m = self.size(1);
  // Contiguous whatever self's strides (a size-1 dimension's stride is free), as PyTorch 1.13's
  // empty_like(self, LEGACY_CONTIGUOUS_MEMORY_FORMAT) and the Meta kernel.
  Tensor result =
      opd::zeros(self.sizes(), self.scalar_type(), std::nullopt, self.device(), std::nullopt);
  if (n <= 1 || m == 0) return result;
  const Tensor gr = grad.contiguous();
  OPD_DISPATCH_FLOATING_TYPES(self.scalar_type(), "pdist_backward", [&] {
    const scalar_t* x = self.data_ptr<scalar_t>();
    const scalar_t* pd = pdist.data_ptr<scalar_t>();
    const scalar_t* pg = gr.data_ptr<scalar_t>();
    scalar_t* out = result.data_ptr<scalar_t>();
    const Norm<scalar_t> norm{p};
    // Row i gathers the gradient of every pair it is in; the pair's difference is taken from
    // row i's side, so no two tasks write one row.
    cpu::parallel_for(0, n, row_grain(n * m), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (j == i) continue;
          const int64_t k = i < j ? pair_index(i, j, n) : pair_index(j, i, n);
          norm.accumulate_grad(out + i * m, x + i * m, x + j * m, m, pg[k], pd[k]);
        }
      }
    });
  });
  return result;
}

}  // namespace opd::native
