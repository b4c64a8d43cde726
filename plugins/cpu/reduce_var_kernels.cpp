// CPU kernels of var.correction, std.correction, var_mean.correction and std_mean.correction;
// the loop is cpu/reduce_loop.h's.
//
// Note [Variance in two passes]
// Each contiguous run of elements (up to kChunk of them, so that it stays in cache) is summed
// once for its mean and once more for the squares of the deviations from it, in double, with
// the corrected two-pass formula (Chan, Golub and LeVeque: M2 = sum(d^2) - sum(d)^2 / n); runs,
// and the pieces of a reduction split over threads, combine with Chan's formula for merging two
// (count, mean, M2) triples. Elements met one at a time (a reduction over an outer dim) update
// the triple as Welford's algorithm does. The variance is M2 / max(0, n - correction), as
// PyTorch's: NaN (or inf) when the degrees of freedom are not positive.

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <tuple>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/reduce_loop.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using namespace cpu::reduction;

inline constexpr int64_t kChunk = 4096;

// |x|^2 of a deviation: x * x for a real one, the squared modulus for a complex one; and the
// real part of conj(x) * y, which is x * y for real ones.
inline double squared(double x) { return x * x; }
inline double squared(const std::complex<double>& x) { return std::norm(x); }
inline double dot(double x, double y) { return x * y; }
inline double dot(const std::complex<double>& x, const std::complex<double>& y) {
  return x.real() * y.real() + x.imag() * y.imag();
}

// The moments of elements of type T, accumulated in Acc (double, or complex<double> for a complex
// T). A complex variance is E|x - mean|^2, the real and imaginary parts' variances summed, and
// is real (R, T's real type), as PyTorch's; the mean stays complex.
template <class T, class R, class Acc>
struct MomentsReducer {
  struct acc_t {
    double n = 0;
    Acc mean{};
    double m2 = 0;
  };
  R* var;   // the variance, or the standard deviation when take_sqrt
  T* mean;  // null unless var_mean / std_mean
  double correction;
  bool take_sqrt;

  static Acc value(T v) {
    if constexpr (cpu::kIsComplex<T>) {
      return Acc(v.real(), v.imag());
    } else {
      return static_cast<double>(cpu::arithmetic(v));
    }
  }
  acc_t init() const { return {}; }
  void step(acc_t& a, T v, int64_t) const {
    const Acc x = value(v);
    a.n += 1;
    const Acc d = x - a.mean;
    a.mean += d / a.n;
    a.m2 += dot(d, x - a.mean);
  }
  void combine(acc_t& a, const acc_t& b) const {
    if (b.n == 0) return;
    if (a.n == 0) {
      a = b;
      return;
    }
    const double n = a.n + b.n;
    const Acc delta = b.mean - a.mean;
    a.mean += delta * (b.n / n);
    a.m2 += b.m2 + squared(delta) * a.n * b.n / n;
    a.n = n;
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t stride, int64_t) const {
    for (int64_t c = 0; c < n; c += kChunk) {
      const int64_t m = std::min(kChunk, n - c);
      const T* q = p + c * stride;
      Acc s[4] = {};
      int64_t k = 0;
      for (; k + 4 <= m; k += 4)
        for (int j = 0; j < 4; ++j) s[j] += value(q[(k + j) * stride]);
      for (; k < m; ++k) s[0] += value(q[k * stride]);
      const Acc mu = ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(m);
      Acc d1[4] = {};
      double d2[4] = {0, 0, 0, 0};
      for (k = 0; k + 4 <= m; k += 4) {
        for (int j = 0; j < 4; ++j) {
          const Acc d = value(q[(k + j) * stride]) - mu;
          d1[j] += d;
          d2[j] += squared(d);
        }
      }
      for (; k < m; ++k) {
        const Acc d = value(q[k * stride]) - mu;
        d1[0] += d;
        d2[0] += squared(d);
      }
      // The corrected two-pass formula: mu's rounding error, sum(d) / m, taken back out of both,
      // so that equal values have a variance of exactly 0 (as Welford's gives, and torch).
      const Acc sd = (d1[0] + d1[1]) + (d1[2] + d1[3]);
      const double m2 = (d2[0] + d2[1]) + (d2[2] + d2[3]) - squared(sd) / static_cast<double>(m);
      combine(a, {static_cast<double>(m), mu + sd / static_cast<double>(m), std::max(0.0, m2)});
    }
  }
  void write(int64_t o, const acc_t& a) const {
    double v = a.m2 / std::max(0.0, a.n - correction);
    if (take_sqrt) v = std::sqrt(v);
    var[o] = convert<R>(v);
    if (mean) {
      constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
      Acc nan{};
      if constexpr (cpu::kIsComplex<T>) {
        nan = Acc(kNaN, kNaN);
      } else {
        nan = kNaN;
      }
      mean[o] = convert<T>(a.n > 0 ? a.mean : nan);
    }
  }
};

template <class T>
struct MomentsTypes {
  using real = T;
  using acc = double;
};
template <class V>
struct MomentsTypes<std::complex<V>> {
  using real = V;
  using acc = std::complex<double>;
};

std::tuple<Tensor, Tensor> moments(const char* op, const Tensor& self, OptionalIntArrayRef dim,
                                   std::optional<int64_t> correction, bool keepdim, bool take_sqrt,
                                   bool with_mean) {
  const common::ReductionMeta m = common::var_meta(op, self, dim, keepdim);
  Tensor var = cpu::empty_cpu(m.sizes, m.dtype);
  Tensor mean = with_mean ? cpu::empty_cpu(m.sizes, self.scalar_type()) : Tensor();
  auto run = [&](auto t) {
    using T = decltype(t);
    using R = typename MomentsTypes<T>::real;
    using Acc = typename MomentsTypes<T>::acc;
    run_reduction<T>(
        self, m.mask,
        MomentsReducer<T, R, Acc>{static_cast<R*>(var.data_ptr()),
                                  with_mean ? static_cast<T*>(mean.data_ptr()) : nullptr,
                                  static_cast<double>(correction.value_or(1)), take_sqrt});
  };
  if (self.scalar_type() == ScalarType::ComplexFloat) {
    run(std::complex<float>{});
  } else if (self.scalar_type() == ScalarType::ComplexDouble) {
    run(std::complex<double>{});
  } else {
    common::visit_floating_dtype(self.scalar_type(), op, run);
  }
  return {var, mean};
}

}  // namespace

Tensor var_correction(const Tensor& self, OptionalIntArrayRef dim,
                      std::optional<int64_t> correction, bool keepdim) {
  return std::get<0>(moments("var", self, dim, correction, keepdim, false, false));
}

Tensor std_correction(const Tensor& self, OptionalIntArrayRef dim,
                      std::optional<int64_t> correction, bool keepdim) {
  return std::get<0>(moments("std", self, dim, correction, keepdim, true, false));
}

std::tuple<Tensor, Tensor> var_mean_correction(const Tensor& self, OptionalIntArrayRef dim,
                                               std::optional<int64_t> correction, bool keepdim) {
  return moments("var_mean", self, dim, correction, keepdim, false, true);
}

std::tuple<Tensor, Tensor> std_mean_correction(const Tensor& self, OptionalIntArrayRef dim,
                                               std::optional<int64_t> correction, bool keepdim) {
  return moments("std_mean", self, dim, correction, keepdim, true, true);
}

}  // namespace opd::native
