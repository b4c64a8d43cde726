// CPU impls of the structured cumsum.out and cumprod.out, and the kernels of cummax and cummin. The
// meta function (common/sort_shape.cpp) made the output, contiguous, of the result dtype; self is
// converted to it first, as PyTorch's impl does. Each line along `dim` accumulates in PyTorch's
// accumulate type for the CPU (double for float, float for BFloat16, int64 for the integers), so
// the values are PyTorch's, rounding included. Lines (or, for a short outer extent, blocks of the
// inner dimensions) run in parallel.

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/output.h"
#include "common/sort_shape.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

// PyTorch's at::acc_type<T, /*is_cuda=*/false>.
template <class T>
struct AccType {
  using type = T;
};
template <>
struct AccType<float> {
  using type = double;
};
template <>
struct AccType<BFloat16> {
  using type = float;
};
template <>
struct AccType<Half> {
  using type = float;
};
template <>
struct AccType<std::complex<float>> {
  using type = std::complex<double>;
};
template <>
struct AccType<uint8_t> {
  using type = int64_t;
};
template <>
struct AccType<int8_t> {
  using type = int64_t;
};
template <>
struct AccType<int16_t> {
  using type = int64_t;
};
template <>
struct AccType<int32_t> {
  using type = int64_t;
};

template <class T>
T from_acc(typename AccType<T>::type v) {
  if constexpr (std::is_same_v<T, std::complex<float>>) {
    return std::complex<float>(v);
  } else {
    return static_cast<T>(v);
  }
}

template <class T, bool kProduct>
void scan_line(const T* src, T* out, int64_t n) {
  using A = typename AccType<T>::type;
  A a = A(kProduct ? 1 : 0);
  for (int64_t j = 0; j < n; ++j) {
    if constexpr (kProduct) {
      a = static_cast<A>(a * static_cast<A>(src[j]));
    } else {
      a = static_cast<A>(a + static_cast<A>(src[j]));
    }
    out[j] = from_acc<T>(a);
  }
}

// out = the running sum (kProduct: product) of src along dim. Both contiguous, of sizes
// [outer, n, inner] once flattened; src may be out itself (each element is read before it is
// written).
template <class T, bool kProduct>
void scan(const T* src, T* out, int64_t outer, int64_t n, int64_t inner) {
  using A = typename AccType<T>::type;
  // acc: one accumulator per inner position of the block (an array: A may be bool).
  auto line_block = [&](int64_t o, int64_t i0, int64_t i1, std::unique_ptr<A[]>& acc) {
    acc.reset(new A[static_cast<size_t>(i1 - i0)]);
    std::fill(acc.get(), acc.get() + (i1 - i0), A(kProduct ? 1 : 0));
    const int64_t base = o * n * inner;
    for (int64_t j = 0; j < n; ++j) {
      const T* s = src + base + j * inner;
      T* d = out + base + j * inner;
      for (int64_t i = i0; i < i1; ++i) {
        A& a = acc[i - i0];
        if constexpr (kProduct) {
          a = static_cast<A>(a * static_cast<A>(s[i]));
        } else {
          a = static_cast<A>(a + static_cast<A>(s[i]));
        }
        d[i] = from_acc<T>(a);
      }
    }
  };
  if (inner == 1) {  // each line contiguous: the accumulator stays in a register
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, n));
    cpu::parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) scan_line<T, kProduct>(src + o * n, out + o * n, n);
    });
    return;
  }
  const int64_t threads = cpu::get_num_threads();
  if (outer >= threads) {
    const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, n * inner));
    cpu::parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      std::unique_ptr<A[]> acc;
      for (int64_t o = b; o < e; ++o) line_block(o, 0, inner, acc);
    });
  } else {
    const int64_t grain = std::max<int64_t>(16, (1 << 14) / std::max<int64_t>(1, n));
    for (int64_t o = 0; o < outer; ++o) {
      cpu::parallel_for(0, inner, grain, [&](int64_t b, int64_t e) {
        std::unique_ptr<A[]> acc;
        line_block(o, b, e, acc);
      });
    }
  }
}

template <bool kProduct>
void scan_out(const char* name, const Tensor& self, int64_t dim, const Tensor& out) {
  // As PyTorch's impl: a 0-dim self is copied, an empty one is no work, and only then does the
  // kernel refuse the dtypes it has no loop for (Half and Bool).
  if (out.numel() == 0) return;
  if (self.dim() == 0) {
    out.copy_(self);
    return;
  }
  const ScalarType out_type = out.scalar_type();
  if (out_type == kHalf || out_type == kBool) common::throw_not_implemented_for(name, out_type);
  dim = maybe_wrap_dim(dim, self.dim());
  Tensor src = common::converted(self, out.scalar_type());
  if (!src.is_contiguous()) src = src.contiguous();
  int64_t outer = 1, inner = 1;
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  common::visit_dtype(out.scalar_type(), name, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, bool>) {
      common::throw_not_implemented_for(name, out_type);
    } else {
      scan<T, kProduct>(static_cast<const T*>(src.data_ptr()), static_cast<T*>(out.data_ptr()),
                        outer, n, inner);
    }
  });
}

// cummax (kMax) / cummin along dim of the contiguous src: PyTorch's rule, a NaN or a value at
// least as large (small) as the running one takes its place, so ties report the later index
// and a NaN stays.
template <class T, bool kMax>
void cum_extreme(const T* src, T* values, int64_t* indices, int64_t outer, int64_t n,
                 int64_t inner) {
  const int64_t lines = outer * inner;
  cpu::parallel_for(0, lines, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, n)),
                    [&](int64_t b, int64_t e) {
                      for (int64_t line = b; line < e; ++line) {
                        const int64_t base = (line / inner) * n * inner + line % inner;
                        T best = src[base];
                        int64_t at = 0;
                        for (int64_t j = 0; j < n; ++j) {
                          const T x = src[base + j * inner];
                          const float xf = static_cast<float>(x), bf = static_cast<float>(best);
                          const bool take =
                              std::isnan(xf) || (!std::isnan(bf) && (kMax ? x >= best : x <= best));
                          if (take) {
                            best = x;
                            at = j;
                          }
                          values[base + j * inner] = best;
                          indices[base + j * inner] = at;
                        }
                      }
                    });
}

template <bool kMax>
std::tuple<Tensor, Tensor> cum_extreme_kernel(const char* name, const Tensor& self, int64_t dim) {
  dim = common::cummaxmin_check(name, self, dim);
  Tensor values = cpu::empty_cpu(self.sizes(), self.scalar_type());
  Tensor indices = cpu::empty_cpu(self.sizes(), kLong);
  if (self.numel() == 0) return {values, indices};
  const Tensor src = self.is_contiguous() ? self : self.contiguous();
  int64_t outer = 1, inner = 1;
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  common::visit_dtype<false>(self.scalar_type(), name, [&](auto t) {
    using T = decltype(t);
    cum_extreme<T, kMax>(static_cast<const T*>(src.data_ptr()), static_cast<T*>(values.data_ptr()),
                         indices.data_ptr<int64_t>(), outer, n, inner);
  });
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  return cum_extreme_kernel<true>("cummax_cpu", self, dim);
}

std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  return cum_extreme_kernel<false>("cummin_cpu", self, dim);
}

void cumsum_out(const Tensor& self, int64_t dim, std::optional<ScalarType> /*dtype*/,
                const Tensor& out) {
  scan_out<false>("cumsum_out_cpu", self, dim, out);
}

void cumprod_out(const Tensor& self, int64_t dim, std::optional<ScalarType> /*dtype*/,
                 const Tensor& out) {
  scan_out<true>("cumprod_out_cpu", self, dim, out);
}

}  // namespace opd::native
