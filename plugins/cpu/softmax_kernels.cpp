// CPU impls of the structured _softmax.out, _log_softmax.out and their backward's. Shapes, dtypes
// and errors come from their meta functions (common/nn_shape.h, shared with Meta). Softmax
// subtracts each lane's maximum before exp, so large inputs do not overflow; Half and BFloat16
// compute in float.
//
// A lane is the D elements along `dim` that one softmax normalises. Lanes are numbered
// row-major over the other dims, which is also how the contiguous result lays them out: lane o
// starts at (o / inner) * D * inner + o % inner, its elements `inner` apart. Where every operand
// is contiguous, up to kTile neighbouring lanes (adjacent in memory) are processed together.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/parallel.h"
#include "cpu/unary_vec.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

constexpr int64_t kGrain = 32768;
constexpr int64_t kTile = 16;

// The type T computes in.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Where w lanes lie in one operand: lane j, element k at base + j * lane + k * elem.
struct LaneRef {
  int64_t base, lane, elem;
  int64_t at(int64_t j, int64_t k) const { return base + j * lane + k * elem; }
};

// Calls f(w, refs) for groups of lanes covering all of them, in parallel; refs[i] places the
// group in operands[i]. `dim` is wrapped; every operand has the same sizes.
template <size_t N, class F>
void for_each_lane_group(const std::array<Tensor, N>& operands, int64_t dim, F&& f) {
  const Tensor& first = operands[0];
  const int64_t D = first.dim() == 0 ? 1 : first.size(dim);
  if (first.numel() == 0) return;
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < first.dim(); ++d) inner *= first.size(d);
  const int64_t lanes = first.numel() / D;
  const bool contiguous = std::all_of(operands.begin(), operands.end(),
                                      [](const Tensor& t) { return t.is_contiguous(); });

  std::array<common::ReductionPlan, N> plans;
  if (!contiguous) {
    const common::DimMask mask = first.dim() == 0 ? common::DimMask() : common::DimMask().set(dim);
    for (size_t i = 0; i < N; ++i)
      plans[i] = common::make_reduction_plan(operands[i].sizes(), operands[i].strides(), mask);
  }
  const int64_t grain = std::max<int64_t>(1, kGrain / D);
  cpu::parallel_for(0, lanes, grain, [&](int64_t begin, int64_t end) {
    std::array<LaneRef, N> refs;
    for (int64_t o = begin; o < end;) {
      int64_t w = 1;
      if (contiguous) {
        w = std::min({kTile, inner - o % inner, end - o});
        const int64_t base = (o / inner) * D * inner + o % inner;
        refs.fill(LaneRef{base, 1, inner});
      } else {
        for (size_t i = 0; i < N; ++i) {
          const int64_t elem = first.dim() == 0 ? 0 : operands[i].stride(dim);
          refs[i] = LaneRef{common::input_offset(plans[i], o), 0, elem};
        }
      }
      f(w, refs);
      o += w;
    }
  });
}

// Note [Softmax over contiguous rows]
// The common case, softmax over the last dim of a contiguous float/double tensor, runs row by
// row with loops the compiler vectorises (eight partial maxima and sums) and SLEEF's vector exp
// (cpu/unary_vec.h, as PyTorch's vec::map), instead of the lane loops below, whose scalar
// std::exp and strided indexing cost several times torch's time. Values agree with the lane
// loops to rounding (another summation order). NaN propagates through the maximum as there.

template <class T>
T row_max(const T* x, int64_t n, bool& nan) {
  T m[8];
  bool bad[8] = {};
  for (int k = 0; k < 8; ++k) m[k] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) {
      const T v = x[i + k];
      m[k] = v > m[k] ? v : m[k];
      bad[k] |= v != v;
    }
  }
  T out = m[0];
  bool any = bad[0];
  for (int k = 1; k < 8; ++k) {
    out = m[k] > out ? m[k] : out;
    any |= bad[k];
  }
  for (; i < n; ++i) {
    out = x[i] > out ? x[i] : out;
    any |= x[i] != x[i];
  }
  nan = any;
  return out;
}

template <class T>
T row_sum8(const T* x, int64_t n) {
  T s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += x[i + k];
  T out = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) out += x[i];
  return out;
}

template <class T>
T row_dot8(const T* a, const T* b, int64_t n) {
  T s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += a[i + k] * b[i + k];
  T out = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) out += a[i] * b[i];
  return out;
}

// Whether the rows fast path applies: the last dim (or a dim followed only by size-1 dims) of
// contiguous operands of a float/double type, and the CPU has the vector exp.
template <class T, size_t N>
bool rows_apply(const std::array<Tensor, N>& operands, int64_t dim) {
  if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
    return false;
  } else {
    const Tensor& first = operands[0];
    if (first.dim() == 0 || first.numel() == 0) return false;
    for (int64_t d = dim + 1; d < first.dim(); ++d)
      if (first.size(d) != 1) return false;
    for (const Tensor& t : operands)
      if (!t.is_contiguous() || t.scalar_type() != first.scalar_type()) return false;
    return cpu::vec::vec_unary<T>(cpu::vec::VecOp::Exp) != nullptr;
  }
}

// Runs f(row_begin, row_end, scratch) over the rows of D elements, in parallel; scratch holds D.
template <class T, class F>
void for_rows(int64_t rows, int64_t D, F&& f) {
  cpu::parallel_for(0, rows, std::max<int64_t>(1, kGrain / D), [&](int64_t begin, int64_t end) {
    std::vector<T> scratch(static_cast<size_t>(D));
    f(begin, end, scratch.data());
  });
}

template <class T, bool kLog>
void softmax_forward_rows(const Tensor& self, const Tensor& out, int64_t D) {
  const T* x = static_cast<const T*>(self.data_ptr());
  T* y = static_cast<T*>(out.data_ptr());
  const auto exp_fn = cpu::vec::vec_unary<T>(cpu::vec::VecOp::Exp);
  for_rows<T>(self.numel() / D, D, [&](int64_t begin, int64_t end, T* tmp) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * D;
      T* yr = y + r * D;
      bool nan = false;
      T m = row_max(xr, D, nan);
      if (nan) m = std::numeric_limits<T>::quiet_NaN();
      T* e = kLog ? tmp : yr;
      for (int64_t k = 0; k < D; ++k) e[k] = xr[k] - m;
      if constexpr (kLog) {
        exp_fn(e, e, D);
        const T lse = std::log(row_sum8(e, D));
        for (int64_t k = 0; k < D; ++k) yr[k] = (xr[k] - m) - lse;
      } else {
        exp_fn(yr, yr, D);
        const T inv = T(1) / row_sum8(yr, D);
        for (int64_t k = 0; k < D; ++k) yr[k] *= inv;
      }
    }
  });
}

template <class T, bool kLog>
void softmax_backward_rows(const Tensor& grad, const Tensor& output, const Tensor& out, int64_t D) {
  const T* g = static_cast<const T*>(grad.data_ptr());
  const T* y = static_cast<const T*>(output.data_ptr());
  T* gi = static_cast<T*>(out.data_ptr());
  const auto exp_fn = cpu::vec::vec_unary<T>(cpu::vec::VecOp::Exp);
  for_rows<T>(grad.numel() / D, D, [&](int64_t begin, int64_t end, T* tmp) {
    for (int64_t r = begin; r < end; ++r) {
      const T* gr = g + r * D;
      const T* yr = y + r * D;
      T* out_r = gi + r * D;
      if constexpr (kLog) {
        const T s = row_sum8(gr, D);
        exp_fn(yr, tmp, D);
        for (int64_t k = 0; k < D; ++k) out_r[k] = gr[k] - tmp[k] * s;
      } else {
        const T s = row_dot8(gr, yr, D);
        for (int64_t k = 0; k < D; ++k) out_r[k] = yr[k] * (gr[k] - s);
      }
    }
  });
}

// Reads T, writes O (T itself: the CPU refuses half_to_float).
template <class T, class O, bool kLog>
void softmax_forward(const Tensor& self, const Tensor& out, int64_t dim) {
  using C = compute_t<T>;
  const T* x = static_cast<const T*>(self.data_ptr());
  O* y = static_cast<O*>(out.data_ptr());
  const int64_t D = self.dim() == 0 ? 1 : self.size(dim);
  for_each_lane_group<2>({self, out}, dim, [&](int64_t w, const std::array<LaneRef, 2>& r) {
    C mx[kTile], sum[kTile];
    for (int64_t j = 0; j < w; ++j) {
      mx[j] = -std::numeric_limits<C>::infinity();
      sum[j] = 0;
    }
    for (int64_t k = 0; k < D; ++k)
      for (int64_t j = 0; j < w; ++j) {
        const C v = static_cast<C>(x[r[0].at(j, k)]);
        if (v > mx[j] || std::isnan(v)) mx[j] = v;
      }
    // Softmax keeps exp(x - max) in the result when it holds C exactly, and scales it after.
    constexpr bool kKeepExp = !kLog && std::is_same_v<O, C>;
    for (int64_t k = 0; k < D; ++k)
      for (int64_t j = 0; j < w; ++j) {
        const C e = std::exp(static_cast<C>(x[r[0].at(j, k)]) - mx[j]);
        if constexpr (kKeepExp) y[r[1].at(j, k)] = e;
        sum[j] += e;
      }
    for (int64_t j = 0; j < w; ++j) sum[j] = kLog ? std::log(sum[j]) : C(1) / sum[j];
    for (int64_t k = 0; k < D; ++k)
      for (int64_t j = 0; j < w; ++j) {
        O& out = y[r[1].at(j, k)];
        if constexpr (kKeepExp) {
          out *= sum[j];
        } else {
          const C v = static_cast<C>(x[r[0].at(j, k)]) - mx[j];
          out = static_cast<O>(kLog ? v - sum[j] : std::exp(v) * sum[j]);
        }
      }
  });
}

// softmax: grad_input = y * (g - sum(g * y)); log_softmax: grad_input = g - exp(y) * sum(g).
// Reads T, writes O (Half for the backward of a half_to_float softmax, else T).
template <class T, class O, bool kLog>
void softmax_backward(const Tensor& grad, const Tensor& output, const Tensor& out, int64_t dim) {
  using C = compute_t<T>;
  const T* g = static_cast<const T*>(grad.data_ptr());
  const T* y = static_cast<const T*>(output.data_ptr());
  O* gi = static_cast<O*>(out.data_ptr());
  const int64_t D = grad.dim() == 0 ? 1 : grad.size(dim);
  for_each_lane_group<3>({grad, output, out}, dim, [&](int64_t w, const std::array<LaneRef, 3>& r) {
    C s[kTile];
    for (int64_t j = 0; j < w; ++j) s[j] = 0;
    for (int64_t k = 0; k < D; ++k)
      for (int64_t j = 0; j < w; ++j) {
        const C gv = static_cast<C>(g[r[0].at(j, k)]);
        s[j] += kLog ? gv : gv * static_cast<C>(y[r[1].at(j, k)]);
      }
    for (int64_t k = 0; k < D; ++k)
      for (int64_t j = 0; j < w; ++j) {
        const C gv = static_cast<C>(g[r[0].at(j, k)]);
        const C yv = static_cast<C>(y[r[1].at(j, k)]);
        gi[r[2].at(j, k)] = static_cast<O>(kLog ? gv - std::exp(yv) * s[j] : yv * (gv - s[j]));
      }
  });
}

// The meta function refused half_to_float on the CPU (PyTorch's CPU kernels do; its CUDA kernels
// implement it), so `out` has self's dtype.
template <bool kLog>
void softmax_into(const char* op, const Tensor& self, int64_t dim, const Tensor& out) {
  OPD_INTERNAL_ASSERT(out.scalar_type() == self.scalar_type(), "{}: half_to_float on the CPU", op);
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  common::visit_floating_dtype(self.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (rows_apply<T, 2>({self, out}, d))
        return softmax_forward_rows<T, kLog>(self, out, self.size(d));
    }
    softmax_forward<T, T, kLog>(self, out, d);
  });
}

// `out` is Half for the backward of a half_to_float softmax (a Float grad), else grad's dtype.
template <bool kLog>
void softmax_backward_into(const char* op, const Tensor& grad, const Tensor& output, int64_t dim,
                           const Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, grad.dim());
  common::visit_floating_dtype(grad.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (rows_apply<T, 3>({grad, output, out}, d))
        return softmax_backward_rows<T, kLog>(grad, output, out, grad.size(d));
    }
    if (out.scalar_type() != grad.scalar_type())
      softmax_backward<T, Half, kLog>(grad, output, out, d);
    else
      softmax_backward<T, T, kLog>(grad, output, out, d);
  });
}

}  // namespace

void softmax_cpu_out(const Tensor& self, int64_t dim, bool, const Tensor& out) {
  softmax_into<false>("_softmax", self, dim, out);
}

void log_softmax_cpu_out(const Tensor& self, int64_t dim, bool, const Tensor& out) {
  softmax_into<true>("_log_softmax", self, dim, out);
}

void softmax_backward_cpu_out(const Tensor& grad_output, const Tensor& output, int64_t dim,
                              ScalarType, const Tensor& grad_input) {
  softmax_backward_into<false>("_softmax_backward_data", grad_output, output, dim, grad_input);
}

void log_softmax_backward_cpu_out(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  ScalarType, const Tensor& out) {
  softmax_backward_into<true>("_log_softmax_backward_data", grad_output, output, dim, out);
}

}  // namespace opd::native
