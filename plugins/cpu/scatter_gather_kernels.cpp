// CPU impls of the structured gather, scatter (src, value, reduce, value_reduce), scatter_add
// and scatter_reduce.two. Their meta functions (common/scatter_gather_shape.cpp) made the
// output, contiguous; each scatter impl copies self into it first (unless it is self) and then
// writes along `dim`, line by line (cpu/index_lines.h), the lines in parallel: two lines differ
// in some other dimension, so they never write the same element. The index's values are
// checked here, as they are read: Error "index 5 is out of bounds for dimension 1 with size 3".

#include <cmath>
#include <complex>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "common/scatter_gather_shape.h"
#include "common/type_dispatch.h"
#include "cpu/index_lines.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using common::ScatterReduce;
using common::size_or_one;

int64_t dim_stride(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 0 : t.stride(dim); }

void check_index(int64_t k, int64_t dim, int64_t bound) {
  OPD_CHECK(k >= 0 && k < bound, "index {} is out of bounds for dimension {} with size {}", k, dim,
            bound);
}

// Elements moved as opaque words of their size: gather and scatter copy values of every dtype.
struct Word16 {
  uint64_t lo, hi;
};
template <class F>
void visit_word(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    default:
      return f(Word16{});
  }
}

template <class T>
constexpr bool kReducedFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
// The type arithmetic on T is done in (PyTorch's opmath_type).
template <class T>
using opmath_t = std::conditional_t<kReducedFloat<T>, float, T>;

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T> || kReducedFloat<T>) {
    return std::isnan(static_cast<float>(v));
  } else {
    return false;
  }
}

// One reduction step, PyTorch's: a is the element of out, b the scattered value.
template <class T>
T reduce_step(ScatterReduce r, T a, T b) {
  using M = opmath_t<T>;
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case ScatterReduce::kSum:
      case ScatterReduce::kMean:
      case ScatterReduce::kMax:
        return a || b;
      default:
        return a && b;
    }
  } else {
    switch (r) {
      case ScatterReduce::kSum:
      case ScatterReduce::kMean:
        return static_cast<T>(M(a) + M(b));
      case ScatterReduce::kProd:
        return static_cast<T>(M(a) * M(b));
      case ScatterReduce::kMax:
        if constexpr (!std::is_same_v<T, std::complex<float>> &&
                      !std::is_same_v<T, std::complex<double>>) {
          return (is_nan(b) || M(b) > M(a)) ? b : a;
        }
        break;
      case ScatterReduce::kMin:
        if constexpr (!std::is_same_v<T, std::complex<float>> &&
                      !std::is_same_v<T, std::complex<double>>) {
          return (is_nan(b) || M(b) < M(a)) ? b : a;
        }
        break;
      default:
        break;
    }
    return b;
  }
}

// a / count for scatter_reduce's mean: floor division for integral types, as PyTorch's.
template <class T>
T mean_of(T a, int64_t count) {
  if constexpr (std::is_same_v<T, bool>) {
    return a;
  } else if constexpr (std::is_integral_v<T>) {
    const int64_t v = static_cast<int64_t>(a);
    int64_t q = v / count;
    if (v % count != 0 && v < 0) --q;
    return static_cast<T>(q);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    return a / static_cast<typename T::value_type>(count);
  } else {
    using M = opmath_t<T>;
    return static_cast<T>(M(a) / static_cast<M>(count));
  }
}

// The scatter family's loop. `src` null: `value` is scattered. kNone assigns; include_self
// false makes the first value scattered into an element replace it (scatter_reduce.two).
void scatter_into(const char* op, const Tensor& self, int64_t dim, const Tensor& index,
                  const Tensor* src, const Scalar& value, ScatterReduce r, bool include_self,
                  const Tensor& out) {
  if (!out.is_same(self)) out.copy_(self);
  if (index.numel() == 0) return;
  dim = maybe_wrap_dim(dim, self.dim());
  const int64_t bound = size_or_one(out, dim);
  const int64_t n = size_or_one(index, dim);
  const int64_t is = dim_stride(index, dim), os = dim_stride(out, dim);
  const int64_t ss = src ? dim_stride(*src, dim) : 0;
  const int64_t* idx = index.data_ptr<int64_t>();
  const bool track = !include_self || r == ScatterReduce::kMean;
  // Per element of out: how many values reached it (mean), or whether one has (include_self).
  std::vector<int64_t> counts(track ? static_cast<size_t>(out.numel()) : 0, include_self ? 1 : 0);
  const IntArrayRef src_strides = src ? src->strides() : index.strides();
  common::visit_dtype(out.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    T* o = static_cast<T*>(out.data_ptr());
    const T* s = src ? static_cast<const T*>(src->data_ptr()) : nullptr;
    const T v = src ? T{} : common::scalar_to<T>(value);
    cpu::for_each_line<3>(
        index.sizes(), dim, {index.strides(), src_strides, out.strides()}, true,
        [&](const std::array<int64_t, 3>& off) {
          for (int64_t j = 0; j < n; ++j) {
            const int64_t k = idx[off[0] + j * is];
            check_index(k, dim, bound);
            const T x = s ? s[off[1] + j * ss] : v;
            T& y = o[off[2] + k * os];
            if (r == ScatterReduce::kNone) {
              y = x;
            } else if (!track) {
              y = reduce_step(r, y, x);
            } else {
              int64_t& c = counts[off[2] + k * os];  // out is contiguous: offset = position
              y = c == 0 ? x : reduce_step(r, y, x);
              ++c;
            }
          }
        });
    if (r == ScatterReduce::kMean) {
      const int64_t total = out.numel();
      for (int64_t i = 0; i < total; ++i) {
        if (counts[i] > 1) o[i] = mean_of(o[i], counts[i]);
      }
    }
  });
}

}  // namespace

void gather_out(const Tensor& self, int64_t dim, const Tensor& index, bool /*sparse_grad*/,
                const Tensor& out) {
  if (index.numel() == 0) return;
  dim = maybe_wrap_dim(dim, self.dim());
  const int64_t bound = size_or_one(self, dim);
  const int64_t n = size_or_one(index, dim);
  const int64_t is = dim_stride(index, dim), ss = dim_stride(self, dim), os = dim_stride(out, dim);
  const int64_t* idx = index.data_ptr<int64_t>();
  visit_word(self.element_size(), [&](auto w) {
    using W = decltype(w);
    const W* s = static_cast<const W*>(self.data_ptr());
    W* o = static_cast<W*>(out.data_ptr());
    cpu::for_each_line<3>(index.sizes(), dim, {index.strides(), self.strides(), out.strides()},
                          true, [&](const std::array<int64_t, 3>& off) {
                            const int64_t* ip = idx + off[0];
                            const W* sp = s + off[1];
                            W* op = o + off[2];
                            for (int64_t j = 0; j < n; ++j) {
                              const int64_t k = ip[j * is];
                              check_index(k, dim, bound);
                              op[j * os] = sp[k * ss];
                            }
                          });
  });
}

void scatter_src_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     const Tensor& out) {
  scatter_into("scatter", self, dim, index, &src, Scalar(0), ScatterReduce::kNone, true, out);
}

void scatter_value_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                       const Tensor& out) {
  scatter_into("scatter", self, dim, index, nullptr, value, ScatterReduce::kNone, true, out);
}

void scatter_reduce_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, const Tensor& out) {
  scatter_into("scatter_", self, dim, index, &src, Scalar(0), common::scatter_reduce_of(reduce),
               true, out);
}

void scatter_value_reduce_out(const Tensor& self, int64_t dim, const Tensor& index,
                              const Scalar& value, std::string_view reduce, const Tensor& out) {
  scatter_into("scatter_", self, dim, index, nullptr, value, common::scatter_reduce_of(reduce),
               true, out);
}

void scatter_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     const Tensor& out) {
  scatter_into("scatter_add", self, dim, index, &src, Scalar(0), ScatterReduce::kSum, true, out);
}

void scatter_reduce_two_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                            std::string_view reduce, bool include_self, const Tensor& out) {
  scatter_into("scatter_reduce", self, dim, index, &src, Scalar(0),
               common::scatter_reduce_two_of(reduce), include_self, out);
}

}  // namespace opd::native
