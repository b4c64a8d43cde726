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
#include "cpu/element_words.h"
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

using cpu::visit_word;

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

[[noreturn]] [[gnu::noinline]] void throw_out_of_bounds(int64_t k, int64_t dim, int64_t bound) {
  check_index(k, dim, bound);
  __builtin_unreachable();
}

// Note [Scatter and gather lines]
// The kernels walk lines (cpu/index_lines.h) along `dim` when it is the index's last dimension
// (or the index has one), else along the last dimension, which is the one contiguous in memory:
// element j of a line reads index ip[j * is] = k and moves between the element (k along dim, j
// along the line) of the indexed tensor, at k * d_dim + j * d_line (d_line 0 when the line is
// along dim), and element j of the other. A gather writes each output element once, so its lines
// always run in parallel; a scatter's lines along dim write disjoint elements and run in
// parallel, its lines along another dimension may write the same element and run in order.
// Each line is one call of a function taking values, so the loop keeps them in registers.
struct LineGeometry {
  int64_t n, is, other_stride, dim_stride, line_stride, bound, dim;
};

template <class W>
void gather_line(W* op, const W* sp, const int64_t* ip, const LineGeometry g) {
  if (g.is == 1 && g.other_stride == 1 && g.line_stride == 0 && g.dim_stride == 1) {
    for (int64_t j = 0; j < g.n; ++j) {  // contiguous lines along dim: the common case
      const int64_t k = ip[j];
      if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(g.bound)) {
        throw_out_of_bounds(k, g.dim, g.bound);
      }
      op[j] = sp[k];
    }
    return;
  }
  for (int64_t j = 0; j < g.n; ++j) {
    const int64_t k = ip[j * g.is];
    if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(g.bound)) {
      throw_out_of_bounds(k, g.dim, g.bound);
    }
    op[j * g.other_stride] = sp[k * g.dim_stride + j * g.line_stride];
  }
}

// kMode: 0 assigns, 1 adds, 3 reduces by r, 2 reduces by r counting into `cp` (laid out as
// out).
template <class T, int kMode>
void scatter_line(T* op, const T* sp, const int64_t* ip, int64_t* cp, ScatterReduce r,
                  const LineGeometry g) {
  if constexpr (kMode == 1 && !std::is_same_v<T, bool>) {
    if (g.is == 1 && g.other_stride == 1 && g.line_stride == 0 && g.dim_stride == 1) {
      using M = opmath_t<T>;
      for (int64_t j = 0; j < g.n; ++j) {  // scatter_add along a contiguous dim: the common case
        const int64_t k = ip[j];
        if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(g.bound)) {
          throw_out_of_bounds(k, g.dim, g.bound);
        }
        op[k] = static_cast<T>(static_cast<M>(op[k]) + static_cast<M>(sp[j]));
      }
      return;
    }
  }
  for (int64_t j = 0; j < g.n; ++j) {
    const int64_t k = ip[j * g.is];
    if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(g.bound)) {
      throw_out_of_bounds(k, g.dim, g.bound);
    }
    const int64_t at = k * g.dim_stride + j * g.line_stride;
    const T x = sp[j * g.other_stride];
    if constexpr (kMode == 0) {
      op[at] = x;
    } else if constexpr (kMode == 1) {
      if constexpr (std::is_same_v<T, bool>) {
        op[at] = reduce_step(r, op[at], x);
      } else {
        op[at] = static_cast<T>(static_cast<opmath_t<T>>(op[at]) + static_cast<opmath_t<T>>(x));
      }
    } else if constexpr (kMode == 3) {
      op[at] = reduce_step(r, op[at], x);
    } else {
      op[at] = cp[at] == 0 ? x : reduce_step(r, op[at], x);
      ++cp[at];
    }
  }
}

// Which dimension the lines of an index of `index_dim` dimensions follow (see Note [Scatter
// and gather lines]).
int64_t line_dim_of(int64_t index_dim, int64_t dim) { return index_dim <= 1 ? dim : index_dim - 1; }

// `t`'s strides with `dim`'s zeroed: the offset of a line's start without the dim coordinate.
std::vector<int64_t> strides_without(const Tensor& t, int64_t dim) {
  std::vector<int64_t> s(t.strides().begin(), t.strides().end());
  if (dim < static_cast<int64_t>(s.size())) s[dim] = 0;
  return s;
}

// The scatter family's loop. `src` null: `value` is scattered. kNone assigns; include_self
// false makes the first value scattered into an element replace it (scatter_reduce.two).
void scatter_into(const char* op, const Tensor& self, int64_t dim, const Tensor& index,
                  const Tensor* src, const Scalar& value, ScatterReduce r, bool include_self,
                  const Tensor& out) {
  if (!out.is_same(self)) out.copy_(self);
  if (index.numel() == 0) return;
  dim = maybe_wrap_dim(dim, self.dim());
  const int64_t line = line_dim_of(index.dim(), dim);
  const bool along_dim = line == dim;
  LineGeometry g;
  g.n = size_or_one(index, line);
  g.is = dim_stride(index, line);
  g.other_stride = src ? dim_stride(*src, line) : 0;
  g.dim_stride = dim_stride(out, dim);
  g.line_stride = along_dim ? 0 : dim_stride(out, line);
  g.bound = size_or_one(out, dim);
  g.dim = dim;
  const int64_t* idx = index.data_ptr<int64_t>();
  const bool track = !include_self || r == ScatterReduce::kMean;
  // Per element of out: how many values reached it (mean), or whether one has (include_self).
  std::vector<int64_t> counts(track ? static_cast<size_t>(out.numel()) : 0, include_self ? 1 : 0);
  const std::vector<int64_t> out_strides = strides_without(out, dim);
  const IntArrayRef src_strides = src ? src->strides() : index.strides();
  common::visit_dtype(out.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    T* o = static_cast<T*>(out.data_ptr());
    const T v = src ? T{} : common::scalar_to<T>(value);
    const T* s = src ? static_cast<const T*>(src->data_ptr()) : &v;
    int64_t* c = counts.data();
    cpu::for_each_line<3>(index.sizes(), line, {index.strides(), src_strides, out_strides},
                          along_dim, [&](const std::array<int64_t, 3>& off) {
                            const int64_t* ip = idx + off[0];
                            const T* sp = src ? s + off[1] : s;
                            if (r == ScatterReduce::kNone) {
                              scatter_line<T, 0>(o + off[2], sp, ip, nullptr, r, g);
                            } else if (!track && r == ScatterReduce::kSum) {
                              scatter_line<T, 1>(o + off[2], sp, ip, nullptr, r, g);
                            } else if (!track) {
                              scatter_line<T, 3>(o + off[2], sp, ip, nullptr, r, g);
                            } else {
                              scatter_line<T, 2>(o + off[2], sp, ip, c + off[2], r, g);
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
  const int64_t line = line_dim_of(index.dim(), dim);
  LineGeometry g;
  g.n = size_or_one(index, line);
  g.is = dim_stride(index, line);
  g.other_stride = dim_stride(out, line);
  g.dim_stride = dim_stride(self, dim);
  g.line_stride = line == dim ? 0 : dim_stride(self, line);
  g.bound = size_or_one(self, dim);
  g.dim = dim;
  const int64_t* idx = index.data_ptr<int64_t>();
  const std::vector<int64_t> self_strides = strides_without(self, dim);
  visit_word(self.element_size(), [&](auto w) {
    using W = decltype(w);
    const W* s = static_cast<const W*>(self.data_ptr());
    W* o = static_cast<W*>(out.data_ptr());
    cpu::for_each_line<3>(index.sizes(), line, {index.strides(), self_strides, out.strides()}, true,
                          [&](const std::array<int64_t, 3>& off) {
                            gather_line<W>(o + off[2], s + off[1], idx + off[0], g);
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
