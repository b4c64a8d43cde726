// CPU impls of the structured amax.out, amin.out, all.out, any.out, all.all_out and any.all_out,
// and the kernels of max() and min() over every element; the loop is cpu/reduce_loop.h's.

#include <bit>
#include <cstdint>
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

// Note [NaN bits of max and min]
// A NaN wins, as in PyTorch, and the NaN written is torch 1.13's, whichever loop found it (the
// AVX2 folds or-in an all-ones NaN, the scalar ones keep the input's): amax and amin write the
// canonical quiet NaN (its max_impl returns quiet_NaN()), max() and min() over every element
// all ones for float and double (its vectorized maximum ors in the unordered mask, and the
// whole reduction stays in vectors) and the first NaN met, in the order the loop meets them,
// for the 16-bit floats. Not followed: torch's amax/amin over an outer dimension write all ones
// in the columns its vectorized loop takes (blocks of 32 floats, 16 doubles) and the canonical
// NaN in the rest. max.dim and min.dim (reduce_arg_kernels.cpp) write the first NaN of the line,
// as torch.
enum class NanBits { kCanonical, kAllOnes, kFirst };

template <class T, bool kMax>
struct MinMaxReducer : ElementwiseReducer<MinMaxReducer<T, kMax>, T, minmax_acc_t<T>> {
  using A = minmax_acc_t<T>;
  static constexpr vec::Fold kVecFold = kMax ? vec::Fold::kMax : vec::Fold::kMin;
  T* out;
  NanBits nan_bits;

  MinMaxReducer(T* o, NanBits n) : out(o), nan_bits(n) {}
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
      return (((kMax ? b > a : b < a) | (b != b)) & (a == a)) ? b : a;
    else
      return (kMax ? b > a : b < a) ? b : a;
  }
  void write(int64_t o, A a) const {
    if constexpr (kIsFloat<T>) {
      if (a != a && nan_bits == NanBits::kCanonical) a = std::numeric_limits<A>::quiet_NaN();
      if (a != a && nan_bits == NanBits::kAllOnes) {
        using Bits = std::conditional_t<sizeof(A) == 8, uint64_t, uint32_t>;
        a = std::bit_cast<A>(~Bits(0));
      }
    }
    out[o] = convert<T>(a);
  }
};

// kAll: max() or min() over every element, else amax or amin (Note [NaN bits of max and min]).
template <bool kMax, bool kAll = false>
void minmax_into(const char* op, const Tensor& self, const common::DimMask& mask,
                 const Tensor& out) {
  common::visit_dtype<false>(self.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    const NanBits nan_bits = !kAll                 ? NanBits::kCanonical
                             : cpu::kIsHalfLike<T> ? NanBits::kFirst
                                                   : NanBits::kAllOnes;
    run_reduction<T>(self, mask, MinMaxReducer<T, kMax>(static_cast<T*>(out.data_ptr()), nan_bits));
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
  minmax_into<true, true>("max_all", self, m.mask, out);
  return out;
}

Tensor min(const Tensor& self) {
  const common::ReductionMeta m = common::max_all_meta("min", self);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  minmax_into<false, true>("min_all", self, m.mask, out);
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
