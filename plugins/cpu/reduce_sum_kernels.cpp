// CPU impls of the structured sum.IntList_out and mean.out (mean divides by the element count),
// and sum and mean over every dim through them; the loop is cpu/reduce_loop.h's.

#include <optional>
#include <type_traits>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/reduce_loop.h"
#include "opd/native/CPU.h"
#include "opd/native/meta_functions.h"

namespace opd::native {

namespace {

using namespace cpu::reduction;

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

// sum and mean of `self` over `dim` into `out` (contiguous, of the result's dtype; the meta
// function made it). An input of another dtype is converted first, as PyTorch's TensorIterator
// does, except integers widening to Long, which the accumulator does by itself.
template <bool kMean>
void sum_into(const char* op, const Tensor& self, OptionalIntArrayRef dim, const Tensor& out) {
  const common::DimMask mask = common::make_dim_mask(dim, self.dim());
  const ScalarType dtype = out.scalar_type();
  const bool widens = is_integral(self.scalar_type(), /*include_bool=*/true) && dtype == kLong;
  const Tensor in = self.scalar_type() != dtype && !widens ? converted(self, dtype, op) : self;
  int64_t count = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (mask.test(d)) count *= self.size(d);
  common::visit_dtype<true>(in.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    common::visit_dtype<true>(dtype, op, [&](auto o) {
      using Out = decltype(o);
      // Only T == Out, or an integer T widening to Out = int64_t, reach here.
      if constexpr (std::is_same_v<T, Out> ||
                    (std::is_integral_v<T> && std::is_same_v<Out, int64_t>)) {
        SumReducer<T, Out, kMean> r{static_cast<Out*>(out.data_ptr()), count};
        run_reduction<T>(in, mask, r);
      } else {
        OPD_INTERNAL_ASSERT(false, "{}: unexpected dtypes {} -> {}", op, in.scalar_type(), dtype);
      }
    });
  });
}

}  // namespace

void sum_out(const Tensor& self, OptionalIntArrayRef dim, bool, std::optional<ScalarType>,
             const Tensor& out) {
  sum_into<false>("sum", self, dim, out);
}

void mean_out(const Tensor& self, OptionalIntArrayRef dim, bool, std::optional<ScalarType>,
              const Tensor& out) {
  sum_into<true>("mean", self, dim, out);
}

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return common::reduce_all(meta::sum_IntList, sum_out, self, dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  return common::reduce_all(meta::mean, mean_out, self, dtype);
}

}  // namespace opd::native
