// The loop shared by the CPU reductions (reduce_sum_kernels.cpp, reduce_minmax_kernels.cpp,
// reduce_arg_kernels.cpp): it walks the input along a ReductionPlan (Note [Reduction geometry])
// and hands the elements to a Reducer, which accumulates in double for floating types, int64 for
// integers and bool, complex<double> for complex types. Their metadata (dims, shapes, dtypes,
// errors) comes from common/reduction.h, as Meta's does.

#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/convert.h"
#include "cpu/cpu_features.h"
#include "cpu/parallel.h"
#include "cpu/reduce_vec.h"
#include "opd/half.h"
#include "opd/tensor.h"

namespace opd::cpu::reduction {

using common::DimMask;
using common::ReductionMeta;
using common::ReductionPlan;

// Input elements per parallel chunk.
inline constexpr int64_t kGrain = 32768;
// Outputs accumulated side by side when the innermost kept dim is the contiguous one.
inline constexpr int64_t kTile = 16;

// Floating point, the 16-bit types included.
template <class T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

using cpu::convert;

template <class T>
bool is_nan(T v) {
  if constexpr (kIsFloat<T>)
    return std::isnan(static_cast<float>(v));
  else
    return false;
}

// Note [Vectorised reductions]
// A reducer that folds elements with one associative operation (sum, prod, amax, the norms, ...)
// derives from ElementwiseReducer and says only how an element enters the accumulator (`load`,
// then `map`, which also takes a vector of accumulators) and how two accumulators combine (`op`,
// written once for a scalar and for a vector). The loop then folds a contiguous run with eight
// 16-byte vectors of accumulators side by side (GCC's vector extensions: SSE2 at least, without
// depending on the auto-vectoriser), blocks of kFoldBlock elements combined as a balanced tree
// (PyTorch's cascade sum: the rounding error of a float sum grows with log(n), so floats
// accumulate in float, as PyTorch's do); and a reduction over an outer dim (the kept inner dim
// contiguous, sum(x, 0)) adds whole rows of up to kColumns outputs at once, in blocks of
// kFoldRows rows combined in order. Accumulators: float for float, Half and BFloat16, double for
// double, int64 for integers and bool, complex<double> for complex (those fold without vectors).
// On a CPU with AVX2 and FMA, the folds of float and double a reducer names in kVecFold run
// reduce_vec_avx2.cpp's loops instead, in the same places (Note [AVX2 reductions]).

namespace simd {
// Types without vectors keep A (never used as a vector: kHasVec is false).
template <class A>
struct VecOf {
  using type = A;
};
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(16)));
};
template <>
struct VecOf<int64_t> {
  typedef int64_t type __attribute__((vector_size(16)));
};
template <>
struct VecOf<int32_t> {
  typedef int32_t type __attribute__((vector_size(16)));
};
template <class A>
using vec = typename VecOf<A>::type;
template <class A>
inline constexpr int64_t kLanes = 16 / static_cast<int64_t>(sizeof(A));
// The accumulator types that fold in vectors.
template <class A>
inline constexpr bool kHasVec = std::is_same_v<A, float> || std::is_same_v<A, double> ||
                                std::is_same_v<A, int64_t> || std::is_same_v<A, int32_t>;
}  // namespace simd

namespace vec {
// reduce_vec_avx2.cpp's loops for T (float or double), or null when the CPU lacks AVX2 or FMA
// (Note [AVX2 reductions]).
template <class T>
RunFn<T> run_fn(Fold f) {
  if (!cpu::has_avx2_fma()) return nullptr;
  if constexpr (std::is_same_v<T, float>)
    return avx2::kRunF32[static_cast<int>(f)];
  else
    return avx2::kRunF64[static_cast<int>(f)];
}
template <class T>
ColumnsFn<T> columns_fn(Fold f) {
  if (!cpu::has_avx2_fma()) return nullptr;
  if constexpr (std::is_same_v<T, float>)
    return avx2::kColumnsF32[static_cast<int>(f)];
  else
    return avx2::kColumnsF64[static_cast<int>(f)];
}
template <class T>
AnyFn<T> any_fn(bool all) {
  if (!cpu::has_avx2_fma()) return nullptr;
  if constexpr (std::is_same_v<T, float>)
    return avx2::kAnyF32[all ? 1 : 0];
  else
    return avx2::kAnyF64[all ? 1 : 0];
}
template <class T>
ArgFn<T> arg_fn(bool max) {
  if (!cpu::has_avx2_fma()) return nullptr;
  if constexpr (std::is_same_v<T, float>)
    return avx2::kArgF32[max ? 1 : 0];
  else
    return avx2::kArgF64[max ? 1 : 0];
}
// Whether T has those loops.
template <class T>
inline constexpr bool kHasAvx2 = std::is_same_v<T, float> || std::is_same_v<T, double>;
}  // namespace vec

// Elements per block of a vectorised fold, and outer rows per block of a column fold.
inline constexpr int64_t kFoldBlock = 1024;
inline constexpr int64_t kFoldRows = 128;
// Outputs folded side by side by a column fold.
inline constexpr int64_t kColumns = 256;

// The accumulator of sum and prod of T (Note [Vectorised reductions]).
template <class T>
using sum_acc_t = std::conditional_t<
    kIsFloat<T> && !std::is_same_v<T, double>, float,
    std::conditional_t<std::is_same_v<T, double>, double, common::acc_type_t<T>>>;

// v as the accumulator type A (the 16-bit floats through float).
template <class A, class T>
A to_acc(T v) {
  if constexpr (cpu::kIsComplex<A>)
    return A(v);
  else
    return static_cast<A>(cpu::arithmetic(v));
}

// Base of the reducers of Note [Vectorised reductions]. Derived provides
//   A init() const;                            the identity of op
//   A load(T) const;                           an element as an accumulator (kLoadIsCast = false
//                                              when it is not static_cast<A>)
//   template <class V> V map(V) const;         applied after load, to A or simd::vec<A>
//   template <class V> V op(V, V) const;       combines two accumulators, of A or simd::vec<A>
//   void write(int64_t out_index, A) const;
// and may name its fold (kVecFold) for the AVX2 loops of Note [AVX2 reductions]: it must then
// be that fold exactly (the same identity, load, map and op).
template <class Derived, class T, class A>
struct ElementwiseReducer {
  using acc_t = A;
  static constexpr bool kElementwise = true;
  // Whether load(v) is the cast of v to A, so that a vector of T == A loads as it is stored.
  static constexpr bool kLoadIsCast = true;
  // The AVX2 loop of this fold, used when T == A is float or double; kNone: none.
  static constexpr vec::Fold kVecFold = vec::Fold::kNone;

  const Derived& self() const { return static_cast<const Derived&>(*this); }
  // Whether runs fold in vectors: only loads that are casts (GCC 12 miscompiles a lane-wise
  // load that compares, as `v[l] = p[l] != 0`, into the comparison's all-ones mask).
  static constexpr bool vectorised() { return simd::kHasVec<A> && Derived::kLoadIsCast; }
  static constexpr bool avx2_fold() {
    return Derived::kVecFold != vec::Fold::kNone && std::is_same_v<T, A> && vec::kHasAvx2<A>;
  }
  A fold1(A a, T v) const { return self().op(a, self().map(self().load(v))); }

  void step(A& a, T v, int64_t) const { a = fold1(a, v); }
  void combine(A& a, const A& b) const { a = self().op(a, b); }
  void row(A& a, const T* p, int64_t n, int64_t stride, int64_t) const {
    a = self().op(a, fold_run(p, n, stride));
  }

  // The fold of p[0], p[stride], ... p[(n - 1) * stride]: blocks of kFoldBlock combined as a
  // balanced tree.
  A fold_run(const T* p, int64_t n, int64_t stride) const {
    if (n > kFoldBlock) {
      const int64_t half = ((n / kFoldBlock + 1) / 2) * kFoldBlock;
      return self().op(fold_run(p, half, stride), fold_run(p + half * stride, n - half, stride));
    }
    if constexpr (vectorised()) {
      if (stride == 1) return fold_block_vec(p, n);
    }
    A s[4] = {self().init(), self().init(), self().init(), self().init()};
    for (int64_t i = 0; i < n; ++i) s[i & 3] = fold1(s[i & 3], p[i * stride]);
    return self().op(self().op(s[0], s[1]), self().op(s[2], s[3]));
  }

  // L contiguous elements as a vector, mapped.
  template <class V = simd::vec<A>>
  V load_vec(const T* p) const {
    V v{};
    if constexpr (std::is_same_v<T, A>) {
      std::memcpy(&v, p, sizeof v);
    } else {
      for (int64_t l = 0; l < simd::kLanes<A>; ++l) v[l] = self().load(p[l]);
    }
    return self().map(v);
  }

  A fold_block_vec(const T* p, int64_t n) const {
    if constexpr (avx2_fold()) {
      if (const auto f = vec::run_fn<A>(Derived::kVecFold)) return f(p, n);
    }
    using V = simd::vec<A>;
    constexpr int64_t L = simd::kLanes<A>;
    constexpr int64_t K = 8;
    V acc[K];
    for (V& v : acc) v = V{} + self().init();
    int64_t i = 0;
    for (; i + K * L <= n; i += K * L)
      for (int64_t k = 0; k < K; ++k) acc[k] = self().op(acc[k], load_vec(p + i + k * L));
    for (; i + L <= n; i += L) acc[0] = self().op(acc[0], load_vec(p + i));
    const V v = self().op(self().op(self().op(acc[0], acc[1]), self().op(acc[2], acc[3])),
                          self().op(self().op(acc[4], acc[5]), self().op(acc[6], acc[7])));
    A r = v[0];
    for (int64_t l = 1; l < L; ++l) r = self().op(r, v[l]);
    for (; i < n; ++i) r = fold1(r, p[i]);
    return r;
  }

  // acc[j] folds p[r * stride + j] for r in [0, rows), in order, and j in [0, w).
  void fold_rows(A* acc, const T* p, int64_t w, int64_t rows, int64_t stride) const {
    if constexpr (avx2_fold()) {
      if (const auto f = vec::columns_fn<A>(Derived::kVecFold)) return f(acc, p, w, rows, stride);
    }
    for (int64_t r = 0; r < rows; ++r) self().fold_columns(acc, p + r * stride, w);
  }

  // acc[j] folds p[j] for j in [0, w).
  void fold_columns(A* acc, const T* p, int64_t w) const {
    int64_t j = 0;
    if constexpr (vectorised()) {
      using V = simd::vec<A>;
      constexpr int64_t L = simd::kLanes<A>;
      for (; j + L <= w; j += L) {
        V a;
        std::memcpy(&a, acc + j, sizeof a);
        a = self().op(a, load_vec(p + j));
        std::memcpy(acc + j, &a, sizeof a);
      }
    }
    for (; j < w; ++j) acc[j] = fold1(acc[j], p[j]);
  }
};

template <class R>
concept ElementwiseReduction = R::kElementwise;

// Note [Reduction pieces]
// Work is cut into pieces of about kGrain elements that the pool's threads claim one at a time
// from a counter, rather than one static chunk per thread, so that a thread the OS runs late (a
// loaded machine) leaves its share to the others instead of holding up the call. Piece
// boundaries depend on the sizes only, so no result depends on the number of threads.
// fn(begin, end) for the pieces [i * grain, min(n, (i + 1) * grain)) of [0, n).
// One piece runs on the calling thread, without the pool (Note [Small reductions]).
template <class F>
void for_each_piece(int64_t n, int64_t grain, const F& fn) {
  const int64_t pieces = (n + grain - 1) / grain;
  if (pieces <= 1) {
    if (pieces == 1) fn(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  cpu::parallel_for(0, std::min(pieces, cpu::get_num_threads()), 1, [&](int64_t, int64_t) {
    for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < pieces;)
      fn(i * grain, std::min(n, (i + 1) * grain));
  });
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
//
// Note [Small reductions]
// x.min() or x.sum() of a few elements is all set-up: the plan (four vectors), the pool's
// parallel_for (a std::function), the row walk. A contiguous tensor reduced over every dim, of at
// most kGrain elements, is one run of numel elements, stride 1, and one output: exactly what the
// plan and the walk would give it (the plan merges contiguous dims into one and drops those of
// size 1), folded here directly, so its result is the same to the bit. Any other reduction of
// at most kGrain elements is one piece of for_each_piece, which runs it on the calling thread.
template <class T, class R>
void run_reduction(const Tensor& self, const DimMask& mask, const R& r) {
  using Acc = typename R::acc_t;
  if (const int64_t numel = self.numel(); numel > 0 && numel <= kGrain &&
                                          static_cast<int64_t>(mask.count()) == self.dim() &&
                                          self.is_contiguous()) {
    Acc acc = r.init();
    // (One element is the plan's run of stride 0, as for_each_reduced_row gives it.)
    r.row(acc, static_cast<const T*>(self.data_ptr()), numel, numel == 1 ? 0 : 1, 0);
    r.write(0, acc);
    return;
  }
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
    // Pieces of whole outer rows (Note [Reduction pieces]), whose results combine in order,
    // adjacent pairs as a balanced tree (a float sum's error grows with log(pieces)).
    const int64_t rows = std::max<int64_t>(1, kGrain / inner);
    const int64_t pieces = (outer + rows - 1) / rows;
    for (int64_t o = 0; o < plan.num_outputs; ++o) {
      const int64_t base = common::input_offset(plan, o);
      struct Part {  // not vector<bool>'s proxies
        Acc acc;
      };
      std::vector<Part> parts(static_cast<size_t>(pieces), Part{r.init()});
      for_each_piece(outer, rows, [&](int64_t a, int64_t b) {
        ReductionPlan piece = plan;
        piece.reduced_sizes[0] = b - a;
        piece.reduced_numel = (b - a) * inner;
        fold(parts[static_cast<size_t>(a / rows)].acc, piece, base + a * plan.reduced_strides[0],
             a * inner);
      });
      for (size_t n = parts.size(); n > 1; n = (n + 1) / 2) {
        for (size_t k = 0; k < n / 2; ++k) {
          r.combine(parts[2 * k].acc, parts[2 * k + 1].acc);
          if (k > 0) parts[k] = parts[2 * k];
        }
        if (n % 2 == 1) parts[n / 2] = parts[n - 1];
      }
      r.write(o, parts[0].acc);
    }
    return;
  }

  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, plan.reduced_numel));
  const bool tiled = !plan.kept_sizes.empty() && plan.kept_strides.back() == 1 &&
                     !plan.reduced_sizes.empty() && plan.reduced_strides.back() != 1;
  if (!tiled) {
    for_each_piece(plan.num_outputs, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        Acc acc = r.init();
        fold(acc, plan, common::input_offset(plan, o), 0);
        r.write(o, acc);
      }
    });
    return;
  }
  // The kept innermost dim is contiguous and the reduced ones are not (a sum over rows).
  const int64_t row_len = plan.kept_sizes.back();
  // Pieces of whole blocks of kColumns outputs: a narrower one would read a fraction of a cache
  // line from each input row.
  const int64_t column_grain = std::max(grain, kColumns);
  if constexpr (ElementwiseReduction<R>) {
    // Whole rows of up to kColumns outputs, kFoldRows input rows at a time (Note [Vectorised
    // reductions]).
    for_each_piece(plan.num_outputs, column_grain, [&](int64_t begin, int64_t end) {
      Acc acc[kColumns], part[kColumns];
      for (int64_t o = begin; o < end;) {
        const int64_t w = std::min({kColumns, row_len - o % row_len, end - o});
        for (int64_t j = 0; j < w; ++j) acc[j] = part[j] = r.init();
        int64_t rows = 0;
        common::for_each_reduced_row(plan, common::input_offset(plan, o),
                                     [&](int64_t off, int64_t n, int64_t st, int64_t) {
                                       for (int64_t k = 0; k < n;) {
                                         const int64_t m = std::min(n - k, kFoldRows - rows);
                                         r.fold_rows(part, in + off + k * st, w, m, st);
                                         k += m;
                                         rows += m;
                                         if (rows == kFoldRows) {
                                           for (int64_t j = 0; j < w; ++j) {
                                             r.combine(acc[j], part[j]);
                                             part[j] = r.init();
                                           }
                                           rows = 0;
                                         }
                                       }
                                     });
        for (int64_t j = 0; j < w; ++j) {
          r.combine(acc[j], part[j]);
          r.write(o + j, acc[j]);
        }
        o += w;
      }
    });
    return;
  }
  // Otherwise accumulate up to kTile neighbouring outputs at once, reading each input row
  // contiguously.
  for_each_piece(plan.num_outputs, column_grain, [&](int64_t begin, int64_t end) {
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

// A contiguous copy of `self` in `dtype`: reductions given a dtype convert first, as PyTorch's
// TensorIterator does.
inline Tensor contiguous_as(const Tensor& self, ScalarType dtype, const char* op) {
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

}  // namespace opd::cpu::reduction
