// CPU impls of the structured sum.IntList_out, mean.out (mean divides by the element count) and
// prod.int_out, sum, mean and prod over every dim through them, nansum and count_nonzero; the
// loop is cpu/reduce_loop.h's.

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

enum class SumKind { kSum, kMean, kNanSum, kProd };

// sum, mean, nansum (NaN counts as 0) and prod of T into Out.
template <class T, class Out, SumKind kKind>
struct SumReducer : ElementwiseReducer<SumReducer<T, Out, kKind>, T, sum_acc_t<T>> {
  using A = sum_acc_t<T>;
  static constexpr vec::Fold kVecFold = kKind == SumKind::kProd     ? vec::Fold::kProd
                                        : kKind == SumKind::kNanSum ? vec::Fold::kNone
                                                                    : vec::Fold::kSum;
  Out* out;
  int64_t count;

  SumReducer(Out* o, int64_t n) : out(o), count(n) {}
  A init() const { return A(kKind == SumKind::kProd ? 1 : 0); }
  A load(T v) const { return to_acc<A>(v); }
  template <class V>
  V map(V v) const {
    if constexpr (kKind == SumKind::kNanSum && kIsFloat<T>)
      return v != v ? V{} : v;
    else
      return v;
  }
  template <class V>
  V op(V a, V b) const {
    if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
      // Integers wrap on overflow, as PyTorch's sums and products do; computed unsigned, where
      // wrapping is defined.
      using U = std::make_unsigned_t<V>;
      const U x = static_cast<U>(a), y = static_cast<U>(b);
      return static_cast<V>(kKind == SumKind::kProd ? static_cast<U>(x * y)
                                                    : static_cast<U>(x + y));
    } else if constexpr (kKind == SumKind::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  void write(int64_t o, A a) const {
    if constexpr (kKind == SumKind::kMean)
      out[o] = convert<Out>(a / static_cast<A>(count));
    else
      out[o] = convert<Out>(a);
  }
};

// sum, mean, nansum or prod of `self` over `mask` into `out` (contiguous, of the result's dtype;
// the meta function made it). An input of another dtype is converted first, as PyTorch's
// TensorIterator does, except integers widening to Long, which the accumulator does by itself.
template <SumKind kKind>
void sum_into(const char* op, const Tensor& self, const common::DimMask& mask, const Tensor& out) {
  const ScalarType dtype = out.scalar_type();
  const bool widens = is_integral(self.scalar_type(), /*include_bool=*/true) && dtype == kLong;
  const Tensor in = self.scalar_type() != dtype && !widens ? contiguous_as(self, dtype, op) : self;
  int64_t count = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (mask.test(d)) count *= self.size(d);
  common::visit_dtype<true>(in.scalar_type(), op, [&](auto t) {
    using T = std::remove_cvref_t<decltype(t)>;
    common::visit_dtype<true>(dtype, op, [&](auto o) {
      using Out = std::remove_cvref_t<decltype(o)>;
      // Only T == Out, or an integer T widening to Out = int64_t, reach here. Each kind is
      // instantiated only for the dtypes its meta function admits (a reducer's loops are most
      // of this file's compile time): mean takes floating and complex types; nansum refuses
      // complex, and reaches an integer T only from an integer input (nansum_meta refuses a
      // floating one into an integer dtype), whose nansum is its sum, as PyTorch's.
      constexpr bool kFloating = kIsFloat<T>;
      constexpr bool kComplex = !kFloating && !std::is_integral_v<T>;
      constexpr SumKind kRun = kKind == SumKind::kNanSum && !kFloating ? SumKind::kSum : kKind;
      constexpr bool kAdmitted = (kKind != SumKind::kMean || kFloating || kComplex) &&
                                 (kKind != SumKind::kNanSum || !kComplex);
      if constexpr (kAdmitted && (std::is_same_v<T, Out> ||
                                  (std::is_integral_v<T> && std::is_same_v<Out, int64_t>))) {
        run_reduction<T>(in, mask,
                         SumReducer<T, Out, kRun>(static_cast<Out*>(out.data_ptr()), count));
      } else {
        OPD_INTERNAL_ASSERT(false, "{}: unexpected dtypes {} -> {}", op, in.scalar_type(), dtype);
      }
    });
  });
}

}  // namespace

void sum_out(const Tensor& self, OptionalIntArrayRef dim, bool, std::optional<ScalarType>,
             const Tensor& out) {
  sum_into<SumKind::kSum>("sum", self, common::make_dim_mask(dim, self.dim()), out);
}

void mean_out(const Tensor& self, OptionalIntArrayRef dim, bool, std::optional<ScalarType>,
              const Tensor& out) {
  sum_into<SumKind::kMean>("mean", self, common::make_dim_mask(dim, self.dim()), out);
}

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return common::reduce_all(meta::sum_IntList, sum_out, self, dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  return common::reduce_all(meta::mean, mean_out, self, dtype);
}

void prod_out(const Tensor& self, int64_t dim, bool, std::optional<ScalarType>, const Tensor& out) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  sum_into<SumKind::kProd>("prod_cpu", self, common::make_dim_mask(IntArrayRef(&d, 1), self.dim()),
                           out);
}

Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) {
  const common::ReductionMeta m = common::prod_meta(self, std::nullopt, false, dtype);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  sum_into<SumKind::kProd>("prod_cpu", self, m.mask, out);
  return out;
}

Tensor nansum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
              std::optional<ScalarType> dtype) {
  const common::ReductionMeta m = common::nansum_meta(self, dim, keepdim, dtype);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  sum_into<SumKind::kNanSum>("nansum_cpu", self, m.mask, out);
  return out;
}

namespace {

// count_nonzero: the non-zero elements, as int64.
template <class T>
struct NonzeroReducer : ElementwiseReducer<NonzeroReducer<T>, T, int64_t> {
  static constexpr bool kLoadIsCast = false;
  int64_t* out;
  explicit NonzeroReducer(int64_t* o) : out(o) {}
  int64_t init() const { return 0; }
  int64_t load(T v) const { return convert<bool>(v) ? 1 : 0; }
  template <class V>
  V map(V v) const {
    return v;
  }
  template <class V>
  V op(V a, V b) const {
    return a + b;
  }
  void write(int64_t o, int64_t a) const { out[o] = a; }
};

}  // namespace

Tensor count_nonzero_dim_IntList(const Tensor& self, IntArrayRef dim) {
  const common::ReductionMeta m = common::count_nonzero_meta(self, dim);
  Tensor out = cpu::empty_cpu(m.sizes, kLong);
  common::visit_dtype<true>(self.scalar_type(), "count_nonzero_cpu", [&](auto t) {
    using T = std::remove_cvref_t<decltype(t)>;
    run_reduction<T>(self, m.mask, NonzeroReducer<T>(out.data_ptr<int64_t>()));
  });
  return out;
}

}  // namespace opd::native
