// CPU kernels of the reductions: sum, mean, amax, amin, argmax, max.dim. Their metadata (dims,
// shapes, dtypes, errors) comes from common/reduction.h, as Meta's does; this file walks the
// input along a ReductionPlan (Note [Reduction geometry]) and accumulates in double for floating
// types, int64 for integers and bool, complex<double> for complex types.

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/half.h"
#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/parallel.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using common::DimMask;
using common::ReductionMeta;
using common::ReductionPlan;

// Input elements per parallel chunk.
constexpr int64_t kGrain = 32768;
// Outputs accumulated side by side when the innermost kept dim is the contiguous one.
constexpr int64_t kTile = 16;

// Floating point, the 16-bit types included.
template <class T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, common::Half> ||
                                 std::is_same_v<T, common::BFloat16>;

template <class T>
inline constexpr bool kIsComplex = false;
template <class T>
inline constexpr bool kIsComplex<std::complex<T>> = true;

// One element converted as PyTorch's static_cast_with_inter_type: a complex value into a real
// type keeps its real part; anything into bool is "non-zero".
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (kIsComplex<From> && !kIsComplex<To>) {
    return static_cast<To>(v.real());
  } else if constexpr (kIsComplex<To>) {
    if constexpr (kIsComplex<From>)
      return To(static_cast<typename To::value_type>(v.real()),
                static_cast<typename To::value_type>(v.imag()));
    else
      return To(static_cast<typename To::value_type>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class T>
bool is_nan(T v) {
  if constexpr (kIsFloat<T>)
    return std::isnan(static_cast<float>(v));
  else
    return false;
}

// Runs a reduction of `self` over `mask`. A Reducer R over elements T provides
//   using acc_t;                      the running state of one output
//   acc_t init() const;
//   void row(acc_t&, const T* p, int64_t n, int64_t stride, int64_t first) const;
//                                     folds p[k * stride], numbered first + k, in order
//   void step(acc_t&, T value, int64_t index) const;      folds one element
//   void combine(acc_t& a, const acc_t& b) const;         folds b, whose elements follow a's
//   void write(int64_t out_index, const acc_t&) const;
// Work is split over outputs; a few outputs with many elements each split their elements
// instead, and combine the pieces in order (so argmax keeps the first maximum).
template <class T, class R>
void run_reduction(const Tensor& self, const DimMask& mask, const R& r) {
  using Acc = typename R::acc_t;
  const ReductionPlan plan = common::make_reduction_plan(self.sizes(), self.strides(), mask);
  if (plan.num_outputs == 0) return;
  const T* in = static_cast<const T*>(self.data_ptr());

  auto fold = [&](Acc& acc, const ReductionPlan& p, int64_t base, int64_t first0) {
    common::for_each_reduced_row(p, base, [&](int64_t off, int64_t n, int64_t st, int64_t first) {
      r.row(acc, in + off, n, st, first0 + first);
    });
  };

  if (plan.num_outputs < cpu::get_num_threads() && plan.reduced_numel >= 2 * kGrain &&
      !plan.reduced_sizes.empty()) {
    const int64_t outer = plan.reduced_sizes[0];
    const int64_t inner = plan.reduced_numel / outer;
    for (int64_t o = 0; o < plan.num_outputs; ++o) {
      const int64_t base = common::input_offset(plan, o);
      std::mutex mu;
      std::vector<std::pair<int64_t, Acc>> parts;
      cpu::parallel_for(0, outer, std::max<int64_t>(1, kGrain / inner), [&](int64_t a, int64_t b) {
        ReductionPlan piece = plan;
        piece.reduced_sizes[0] = b - a;
        piece.reduced_numel = (b - a) * inner;
        Acc acc = r.init();
        fold(acc, piece, base + a * plan.reduced_strides[0], a * inner);
        std::lock_guard<std::mutex> lock(mu);
        parts.emplace_back(a, acc);
      });
      std::sort(parts.begin(), parts.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      Acc acc = r.init();
      for (const auto& part : parts) r.combine(acc, part.second);
      r.write(o, acc);
    }
    return;
  }

  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, plan.reduced_numel));
  const bool tiled = !plan.kept_sizes.empty() && plan.kept_strides.back() == 1 &&
                     !plan.reduced_sizes.empty() && plan.reduced_strides.back() != 1;
  if (!tiled) {
    cpu::parallel_for(0, plan.num_outputs, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        Acc acc = r.init();
        fold(acc, plan, common::input_offset(plan, o), 0);
        r.write(o, acc);
      }
    });
    return;
  }
  // The kept innermost dim is contiguous and the reduced ones are not (a sum over rows):
  // accumulate up to kTile neighbouring outputs at once, reading each input row contiguously.
  const int64_t row_len = plan.kept_sizes.back();
  cpu::parallel_for(0, plan.num_outputs, grain, [&](int64_t begin, int64_t end) {
    Acc acc[kTile];
    for (int64_t o = begin; o < end;) {
      const int64_t w = std::min({kTile, row_len - o % row_len, end - o});
      for (int64_t j = 0; j < w; ++j) acc[j] = r.init();
      common::for_each_reduced_row(plan, common::input_offset(plan, o),
                                   [&](int64_t off, int64_t n, int64_t st, int64_t first) {
                                     for (int64_t k = 0; k < n; ++k) {
                                       const T* p = in + off + k * st;
                                       for (int64_t j = 0; j < w; ++j)
                                         r.step(acc[j], p[j], first + k);
                                     }
                                   });
      for (int64_t j = 0; j < w; ++j) r.write(o + j, acc[j]);
      o += w;
    }
  });
}

// sum and mean (mean divides by the element count) of T into Out.
template <class T, class Out, bool kMean>
struct SumReducer {
  using acc_t = common::acc_type_t<Out>;
  Out* out;
  int64_t count;

  static acc_t load(T v) { return static_cast<acc_t>(v); }
  acc_t init() const { return acc_t(0); }
  void step(acc_t& a, T v, int64_t) const { a += load(v); }
  void row(acc_t& a, const T* p, int64_t n, int64_t stride, int64_t) const {
    if constexpr (std::is_integral_v<acc_t>) {
      for (int64_t k = 0; k < n; ++k) a += load(p[k * stride]);
    } else {
      a += common::pairwise_sum<acc_t>(p, n, stride, [](T v) { return load(v); });
    }
  }
  void combine(acc_t& a, const acc_t& b) const { a += b; }
  void write(int64_t o, const acc_t& a) const {
    if constexpr (kMean)
      out[o] = convert<Out>(a / static_cast<acc_t>(count));
    else
      out[o] = convert<Out>(a);
  }
};

// amax / amin: NaN wins, as in PyTorch.
template <class T, bool kMax>
struct MinMaxReducer {
  using acc_t = T;
  T* out;

  acc_t init() const {
    if constexpr (std::is_same_v<T, bool>)
      return !kMax;
    else if constexpr (kIsFloat<T>)
      return T(kMax ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity());
    else
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  void step(acc_t& a, T v, int64_t) const {
    if ((kMax ? v > a : v < a) || is_nan(v)) a = v;
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t stride, int64_t) const {
    for (int64_t k = 0; k < n; ++k) step(a, p[k * stride], 0);
  }
  void combine(acc_t& a, const acc_t& b) const { step(a, b, 0); }
  void write(int64_t o, const acc_t& a) const { out[o] = a; }
};

// argmax and max.dim: the first largest element (the first NaN if any) and its index.
template <class T>
struct ArgMaxReducer {
  struct acc_t {
    T value{};
    int64_t index = -1;  // -1 until an element was seen
  };
  T* values;  // null for argmax
  int64_t* indices;

  acc_t init() const { return {}; }
  void step(acc_t& a, T v, int64_t i) const {
    if (a.index < 0 || (!is_nan(a.value) && (v > a.value || is_nan(v)))) a = {v, i};
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t stride, int64_t first) const {
    for (int64_t k = 0; k < n; ++k) step(a, p[k * stride], first + k);
  }
  void combine(acc_t& a, const acc_t& b) const {
    if (b.index >= 0) step(a, b.value, b.index);
  }
  void write(int64_t o, const acc_t& a) const {
    if (values) values[o] = a.value;
    indices[o] = a.index;
  }
};

// A contiguous copy of `self` in `dtype` (sum and mean with an explicit dtype convert first, as
// PyTorch's TensorIterator does).
Tensor converted(const Tensor& self, ScalarType dtype, const char* op) {
  Tensor out = cpu::empty_cpu(self.sizes(), dtype);
  const ReductionPlan plan = common::make_reduction_plan(
      self.sizes(), self.strides(), common::make_dim_mask(std::nullopt, self.dim()));
  if (plan.num_outputs == 0) return out;
  common::visit_dtype<true>(self.scalar_type(), op, [&](auto from) {
    using From = decltype(from);
    common::visit_dtype<true>(dtype, op, [&](auto to) {
      using To = decltype(to);
      const From* in = static_cast<const From*>(self.data_ptr());
      To* o = static_cast<To*>(out.data_ptr());
      common::for_each_reduced_row(plan, 0, [&](int64_t off, int64_t n, int64_t st, int64_t first) {
        for (int64_t k = 0; k < n; ++k) o[first + k] = convert<To>(in[off + k * st]);
      });
    });
  });
  return out;
}

template <bool kMean>
Tensor sum_impl(const char* op, const Tensor& self, const ReductionMeta& m,
                std::optional<ScalarType> dtype) {
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  // An explicit dtype converts the elements first; without one only integers widen to Long,
  // which the accumulator does by itself.
  const Tensor in = dtype && *dtype != self.scalar_type() ? converted(self, *dtype, op) : self;
  int64_t count = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (m.mask.test(d)) count *= self.size(d);
  common::visit_dtype<true>(in.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    common::visit_dtype<true>(m.dtype, op, [&](auto o) {
      using Out = decltype(o);
      // Only T == Out, or an integer T widening to Out = int64_t, reach here.
      if constexpr (std::is_same_v<T, Out> ||
                    (std::is_integral_v<T> && std::is_same_v<Out, int64_t>)) {
        SumReducer<T, Out, kMean> r{static_cast<Out*>(out.data_ptr()), count};
        run_reduction<T>(in, m.mask, r);
      } else {
        OPD_INTERNAL_ASSERT(false, "{}: unexpected dtypes {} -> {}", op, in.scalar_type(), m.dtype);
      }
    });
  });
  return out;
}

Tensor minmax_impl(const char* op, bool is_max, const Tensor& self, IntArrayRef dim, bool keepdim) {
  const ReductionMeta m = common::amax_meta(op, self, dim, keepdim);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  common::visit_dtype<false>(self.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    T* o = static_cast<T*>(out.data_ptr());
    if (is_max)
      run_reduction<T>(self, m.mask, MinMaxReducer<T, true>{o});
    else
      run_reduction<T>(self, m.mask, MinMaxReducer<T, false>{o});
  });
  return out;
}

}  // namespace

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  const ReductionMeta m = common::sum_meta(self, std::nullopt, false, dtype);
  return sum_impl<false>("sum", self, m, dtype);
}

Tensor sum_dim_IntList(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  const ReductionMeta m = common::sum_meta(self, dim, keepdim, dtype);
  return sum_impl<false>("sum", self, m, dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  const ReductionMeta m = common::mean_meta(self, std::nullopt, false, dtype);
  return sum_impl<true>("mean", self, m, dtype);
}

Tensor mean_dim(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                std::optional<ScalarType> dtype) {
  const ReductionMeta m = common::mean_meta(self, dim, keepdim, dtype);
  return sum_impl<true>("mean", self, m, dtype);
}

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return minmax_impl("amax", true, self, dim, keepdim);
}

Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return minmax_impl("amin", false, self, dim, keepdim);
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  const ReductionMeta m = common::argmax_meta(self, dim, keepdim);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  common::visit_dtype<false>(self.scalar_type(), "argmax", [&](auto t) {
    using T = decltype(t);
    run_reduction<T>(self, m.mask, ArgMaxReducer<T>{nullptr, out.data_ptr<int64_t>()});
  });
  return out;
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  const ReductionMeta m = common::max_dim_meta(self, dim, keepdim);
  Tensor values = cpu::empty_cpu(m.sizes, m.dtype);
  Tensor indices = cpu::empty_cpu(m.sizes, kLong);
  common::visit_dtype<false>(self.scalar_type(), "max", [&](auto t) {
    using T = decltype(t);
    run_reduction<T>(
        self, m.mask,
        ArgMaxReducer<T>{static_cast<T*>(values.data_ptr()), indices.data_ptr<int64_t>()});
  });
  return {values, indices};
}

}  // namespace opd::native
