#pragma once

// The entry points of reduce_vec_avx2.cpp, the AVX2 loops of the CPU reductions over float and
// double (Note [AVX2 reductions]). Declarations only: the AVX2 file includes this header, so it
// must hold no inline code (cpu_features.h's note). Looked up by reduce_loop.h's
// vec::run_fn(), columns_fn(), arg_fn() and any_fn() after the CPU check.

#include <cstdint>

namespace opd::cpu::reduction::vec {

// Note [AVX2 reductions]
// The CPU plugin is compiled for baseline x86-64, where Note [Vectorised reductions]'s GCC
// vectors are 16-byte SSE2. reduce_vec_avx2.cpp alone is compiled with -mavx2 -mfma and holds,
// for float and double, the three loops the reductions spend their time in:
//   - a contiguous run folded into one value (sum, mean, prod, amax/amin, max(), the 1- and
//     2-norms): eight 32-byte vectors of accumulators side by side, combined as a balanced tree
//     at the end; reduce_loop.h keeps calling it on blocks of kFoldBlock elements combined
//     pairwise (the cascade sum), so a float sum's rounding error still grows with log(n);
//   - a row of up to kColumns outputs folding the next input rows (a reduction over an outer
//     dim, sum(x, 0)): acc[j] = op(acc[j], p[j]) eight (four) columns at a time, four rows at
//     once in order (each accumulator is loaded and stored once per four rows); any / all over
//     rows the same way, into bool accumulators;
//   - argmax / argmin over a contiguous run: per lane the first largest element (strictly
//     greater replaces), then the lanes combined by value, the smaller index on ties; a NaN
//     replaces anything but a NaN, so the first NaN wins, as PyTorch's.
// max / min propagate NaN lane by lane: an accumulator that is NaN stays (vmaxps returns its
// second operand when either is NaN), and an element that is NaN makes it NaN (the all-ones
// mask of an unordered compare, or-ed in, is a NaN). The identity elements, the tails shorter than
// a vector and the combination of lanes are the scalar reducers' (same operations in the same
// type), so only the order of the additions differs from the SSE2 loop. reduce_loop.h calls these
// only when cpu::has_avx2_fma() and the reducer names its fold (kVecFold) over T == its
// accumulator; other CPUs, dtypes and strided runs take the loops of reduce_loop.h.
enum class Fold : int {
  kSum,         // a + x (sum, mean)
  kSumSquares,  // a + x * x (the 2-norm before its square root)
  kSumAbs,      // a + |x| (the 1-norm)
  kProd,        // a * x
  kMax,         // NaN-propagating max (amax, max())
  kMin,         // NaN-propagating min
  kNone,        // no AVX2 loop: the reducer's own
};
inline constexpr int kNumFolds = static_cast<int>(Fold::kNone);

// The fold of p[0..n) (n >= 0) from the identity of the fold.
template <class T>
using RunFn = T (*)(const T* p, int64_t n);
// acc[j] = fold(acc[j], p[r * stride + j]) for r in [0, rows) in order, j in [0, w).
template <class T>
using ColumnsFn = void (*)(T* acc, const T* p, int64_t w, int64_t rows, int64_t stride);
// any (all): acc[j] = acc[j] || (&&) p[r * stride + j] != 0 for r in [0, rows), j in [0, w).
template <class T>
using AnyFn = void (*)(bool* acc, const T* p, int64_t w, int64_t rows, int64_t stride);
// The index of the first largest (kMax) or smallest element of p[0..n), the first NaN if any;
// 1 <= n < 2^31.
template <class T>
using ArgFn = int64_t (*)(const T* p, int64_t n);

namespace avx2 {
extern const RunFn<float> kRunF32[kNumFolds];
extern const RunFn<double> kRunF64[kNumFolds];
extern const ColumnsFn<float> kColumnsF32[kNumFolds];
extern const ColumnsFn<double> kColumnsF64[kNumFolds];
extern const ArgFn<float> kArgF32[2];  // [0] argmin, [1] argmax
extern const ArgFn<double> kArgF64[2];
extern const AnyFn<float> kAnyF32[2];  // [0] any, [1] all
extern const AnyFn<double> kAnyF64[2];
}  // namespace avx2

}  // namespace opd::cpu::reduction::vec
