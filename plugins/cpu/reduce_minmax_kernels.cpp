// CPU impls of the structured amax.out, amin.out, all.out, any.out, all.all_out and any.all_out,
// and the kernels of max() and min() over every element; the loop is cpu/reduce_loop.h's.

#include <limits>
#include <type_traits>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/reduce_loop.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using namespace cpu::reduction;

// The accumulator of amax / amin: float for the 16-bit floats, else the element type.
template <class T>
using minmax_acc_t = std::conditional_t<cpu::kIsHalfLike<T>, float, T>;

// amax / amin: NaN wins, as in PyTorch.
template <class T, bool kMax>
struct MinMaxReducer : ElementwiseReducer<MinMaxReducer<T, kMax>, T, minmax_acc_t<T>> {
  using A = minmax_acc_t<T>;
  static constexpr vec::Fold kVecFold = kMax ? vec::Fold::kMax : vec::Fold::kMin;
  T* out;

  explicit MinMaxReducer(T* o) : out(o) {}
  A init() const {
    if constexpr (std::is_same_v<T, bool>)
      return !kMax;
    else if constexpr (kIsFloat<T>)
      return kMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    else
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  A load(T v) const { return to_acc<A>(v); }
  template <class V>
  V map(V v) const {
    return v;
  }
  // b when it wins over a, or is NaN; a NaN in a stays.
  template <class V>
  V op(V a, V b) const {
    if constexpr (kIsFloat<T>)
      return ((kMax ? b > a : b < a) | (b != b)) ? b : a;
    else
      return (kMax ? b > a : b < a) ? b : a;
  }
  void write(int64_t o, A a) const { out[o] = convert<T>(a); }
};

template <bool kMax>
void minmax_into(const char* op, const Tensor& self, const common::DimMask& mask,
                 const Tensor& out) {
  common::visit_dtype<false>(self.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    run_reduction<T>(self, mask, MinMaxReducer<T, kMax>(static_cast<T*>(out.data_ptr())));
  });
}

// all (kAll) / any: whether every / some element is non-zero, written as Out (bool, or uint8
// for a uint8 input, as PyTorch 1.13).
template <class T, class Out, bool kAll>
struct AllAnyReducer : ElementwiseReducer<AllAnyReducer<T, Out, kAll>, T, bool> {
  static constexpr bool kLoadIsCast = false;
  Out* out;
  explicit AllAnyReducer(Out* o) : out(o) {}
  bool init() const { return kAll; }
  bool load(T v) const { return convert<bool>(v); }
  template <class V>
  V map(V v) const {
    return v;
  }
  template <class V>
  V op(V a, V b) const {
    if constexpr (kAll)
      return a && b;
    else
      return a || b;
  }
  void write(int64_t o, bool a) const { out[o] = static_cast<Out>(a); }
  // Note [AVX2 reductions]: float and double rows at once.
  void fold_rows(bool* acc, const T* p, int64_t w, int64_t rows, int64_t stride) const {
    if constexpr (vec::kHasAvx2<T>) {
      if (const auto f = vec::any_fn<T>(kAll)) return f(acc, p, w, rows, stride);
    }
    ElementwiseReducer<AllAnyReducer, T, bool>::fold_rows(acc, p, w, rows, stride);
  }
};

template <bool kAll>
void all_any_into(const Tensor& self, const common::DimMask& mask, const Tensor& out) {
  common::visit_dtype<true>(self.scalar_type(), kAll ? "all" : "any", [&](auto t) {
    using T = decltype(t);
    if (out.scalar_type() == kByte)
      run_reduction<T>(self, mask, AllAnyReducer<T, uint8_t, kAll>(out.data_ptr<uint8_t>()));
    else
      run_reduction<T>(self, mask, AllAnyReducer<T, bool, kAll>(out.data_ptr<bool>()));
  });
}

common::DimMask one_dim(const Tensor& self, int64_t dim) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  return common::make_dim_mask(IntArrayRef(&d, 1), self.dim());
}

}  // namespace

void amax_out(const Tensor& self, IntArrayRef dim, bool, const Tensor& out) {
  minmax_into<true>("amax", self, common::make_dim_mask(dim, self.dim()), out);
}

void amin_out(const Tensor& self, IntArrayRef dim, bool, const Tensor& out) {
  minmax_into<false>("amin", self, common::make_dim_mask(dim, self.dim()), out);
}

Tensor max(const Tensor& self) {
  const common::ReductionMeta m = common::max_all_meta("max", self);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  minmax_into<true>("max_all", self, m.mask, out);
  return out;
}

Tensor min(const Tensor& self) {
  const common::ReductionMeta m = common::max_all_meta("min", self);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  minmax_into<false>("min_all", self, m.mask, out);
  return out;
}

void all_out(const Tensor& self, int64_t dim, bool, const Tensor& out) {
  all_any_into<true>(self, one_dim(self, dim), out);
}

void any_out(const Tensor& self, int64_t dim, bool, const Tensor& out) {
  all_any_into<false>(self, one_dim(self, dim), out);
}

void all_all_out(const Tensor& self, const Tensor& out) {
  all_any_into<true>(self, common::make_dim_mask(std::nullopt, self.dim()), out);
}

void any_all_out(const Tensor& self, const Tensor& out) {
  all_any_into<false>(self, common::make_dim_mask(std::nullopt, self.dim()), out);
}

}  // namespace opd::native
