// The AVX2 loops of the CPU reductions over float and double (Note [AVX2 reductions],
// cpu/reduce_vec.h). This file alone is compiled with -mavx2 -mfma (plugins/cpu/CMakeLists.txt)
// and includes no header with inline code of the project but cpu/vec_avx2.h (whose structs
// each AVX2 file has a copy of its own), so that no AVX2 instruction reaches a function another
// file could pick at link time.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu/reduce_vec.h"
#include "cpu/vec_avx2.h"

namespace opd::cpu::reduction::vec::avx2 {

namespace {

using cpu::avx2::F32;
using cpu::avx2::F64;

// A fold: init() its identity; step(a, x) takes an element in, combine(a, b) two accumulators;
// each for a scalar T and for a vector S::V.
template <Fold kFold>
struct Op {
  template <class T>
  static T init() {
    if constexpr (kFold == Fold::kProd) return T(1);
    if constexpr (kFold == Fold::kMax) return -std::numeric_limits<T>::infinity();
    if constexpr (kFold == Fold::kMin) return std::numeric_limits<T>::infinity();
    return T(0);
  }
  template <class T>
  static T combine(T a, T b) {
    if constexpr (kFold == Fold::kProd)
      return a * b;
    else if constexpr (kFold == Fold::kMax)
      return (b > a || b != b) ? b : a;
    else if constexpr (kFold == Fold::kMin)
      return (b < a || b != b) ? b : a;
    else
      return a + b;
  }
  template <class T>
  static T step(T a, T x) {
    if constexpr (kFold == Fold::kSumSquares)
      return a + x * x;
    else if constexpr (kFold == Fold::kSumAbs)
      return a + std::fabs(x);
    else
      return combine(a, x);
  }
  template <class S>
  static typename S::V vcombine(typename S::V a, typename S::V b) {
    if constexpr (kFold == Fold::kProd)
      return S::mul(a, b);
    else if constexpr (kFold == Fold::kMax)  // a NaN in a stays, one in b is or-ed in
      return S::vor(S::max(b, a), S::isnan(b));
    else if constexpr (kFold == Fold::kMin)
      return S::vor(S::min(b, a), S::isnan(b));
    else
      return S::add(a, b);
  }
  template <class S>
  static typename S::V vstep(typename S::V a, typename S::V x) {
    if constexpr (kFold == Fold::kSumSquares)
      return S::fmadd(x, x, a);
    else if constexpr (kFold == Fold::kSumAbs)
      return S::add(a, S::abs(x));
    else
      return vcombine<S>(a, x);
  }
};

// Eight vectors of accumulators side by side, combined as a tree, then the lanes in order, then
// the tail one element at a time. The accumulators are named one by one: GCC keeps an array of
// them in memory, and the loop then waits on its own stores.
template <class S, Fold kFold>
typename S::T fold_run(const typename S::T* p, int64_t n) {
  using T = typename S::T;
  using V = typename S::V;
  using O = Op<kFold>;
  constexpr int64_t L = S::kWidth;
  const V id = S::set1(O::template init<T>());
  V a0 = id, a1 = id, a2 = id, a3 = id, a4 = id, a5 = id, a6 = id, a7 = id;
  int64_t i = 0;
  for (; i + 8 * L <= n; i += 8 * L) {
    const T* q = p + i;
    a0 = O::template vstep<S>(a0, S::load(q));
    a1 = O::template vstep<S>(a1, S::load(q + L));
    a2 = O::template vstep<S>(a2, S::load(q + 2 * L));
    a3 = O::template vstep<S>(a3, S::load(q + 3 * L));
    a4 = O::template vstep<S>(a4, S::load(q + 4 * L));
    a5 = O::template vstep<S>(a5, S::load(q + 5 * L));
    a6 = O::template vstep<S>(a6, S::load(q + 6 * L));
    a7 = O::template vstep<S>(a7, S::load(q + 7 * L));
  }
  for (; i + L <= n; i += L) a0 = O::template vstep<S>(a0, S::load(p + i));
  a0 = O::template vcombine<S>(O::template vcombine<S>(a0, a1), O::template vcombine<S>(a2, a3));
  a4 = O::template vcombine<S>(O::template vcombine<S>(a4, a5), O::template vcombine<S>(a6, a7));
  a0 = O::template vcombine<S>(a0, a4);
  alignas(32) T lanes[L];
  S::store(lanes, a0);
  T r = lanes[0];
  for (int64_t l = 1; l < L; ++l) r = O::combine(r, lanes[l]);
  for (; i < n; ++i) r = O::step(r, p[i]);
  return r;
}

// Four input rows at a time: each vector of accumulators is loaded and stored once per four
// rows, and takes the rows in order.
template <class S, Fold kFold>
void fold_columns(typename S::T* acc, const typename S::T* p, int64_t w, int64_t rows,
                  int64_t stride) {
  using T = typename S::T;
  using O = Op<kFold>;
  constexpr int64_t L = S::kWidth;
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const T* q = p + r * stride;
    int64_t j = 0;
    for (; j + L <= w; j += L) {
      auto a = S::load(acc + j);
      a = O::template vstep<S>(a, S::load(q + j));
      a = O::template vstep<S>(a, S::load(q + stride + j));
      a = O::template vstep<S>(a, S::load(q + 2 * stride + j));
      a = O::template vstep<S>(a, S::load(q + 3 * stride + j));
      S::store(acc + j, a);
    }
    for (; j < w; ++j)
      for (int64_t k = 0; k < 4; ++k) acc[j] = O::step(acc[j], q[k * stride + j]);
  }
  for (; r < rows; ++r) {
    const T* q = p + r * stride;
    int64_t j = 0;
    for (; j + L <= w; j += L)
      S::store(acc + j, O::template vstep<S>(S::load(acc + j), S::load(q + j)));
    for (; j < w; ++j) acc[j] = O::step(acc[j], q[j]);
  }
}

// The non-zero lanes of a vector as eight (four) bytes of 0 or 1, in order.
inline uint64_t nonzero_bytes(__m256 x) {
  const __m256i m = _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NEQ_UQ));
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
  const __m128i b = _mm_and_si128(_mm_packs_epi16(w, w), _mm_set1_epi8(1));
  return static_cast<uint64_t>(_mm_cvtsi128_si64(b));
}
inline uint32_t nonzero_bytes(__m256d x) {
  const __m256i m = _mm256_castpd_si256(_mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_NEQ_UQ));
  // The low 32 bits of each 64-bit lane, then as for float.
  const __m256i lo = _mm256_permutevar8x32_epi32(m, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(lo), _mm256_castsi256_si128(lo));
  const __m128i b = _mm_and_si128(_mm_packs_epi16(w, w), _mm_set1_epi8(1));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(b));
}

// any (kAll false) / all over rows, as fold_columns; bool is one byte of 0 or 1.
template <class S, bool kAll>
void any_columns(bool* acc, const typename S::T* p, int64_t w, int64_t rows, int64_t stride) {
  using T = typename S::T;
  constexpr int64_t L = S::kWidth;
  using Bytes = decltype(nonzero_bytes(S::set1(0)));
  static_assert(sizeof(Bytes) == L && sizeof(bool) == 1);
  int64_t j = 0;
  for (; j + L <= w; j += L) {
    Bytes a;
    std::memcpy(&a, acc + j, sizeof a);
    for (int64_t r = 0; r < rows; ++r) {
      const Bytes b = nonzero_bytes(S::load(p + r * stride + j));
      a = kAll ? (a & b) : (a | b);
    }
    std::memcpy(acc + j, &a, sizeof a);
  }
  for (; j < w; ++j) {
    bool a = acc[j];
    for (int64_t r = 0; r < rows; ++r) {
      const T x = p[r * stride + j];
      a = kAll ? (a && x != T(0)) : (a || x != T(0));
    }
    acc[j] = a;
  }
}

// Lane indices as integers of the element's width (int32 for float, int64 for double), so that a
// blend of values and one of indices take the same mask.
template <class S>
struct Index;
template <>
struct Index<F32> {
  static __m256 first() { return _mm256_castsi256_ps(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
  static __m256 add(__m256 i, int64_t d) {
    return _mm256_castsi256_ps(
        _mm256_add_epi32(_mm256_castps_si256(i), _mm256_set1_epi32(static_cast<int32_t>(d))));
  }
  static void store(int64_t* out, __m256 i) {
    alignas(32) int32_t v[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(v), _mm256_castps_si256(i));
    for (int l = 0; l < 8; ++l) out[l] = v[l];
  }
};
template <>
struct Index<F64> {
  static __m256d first() { return _mm256_castsi256_pd(_mm256_setr_epi64x(0, 1, 2, 3)); }
  static __m256d add(__m256d i, int64_t d) {
    return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(i), _mm256_set1_epi64x(d)));
  }
  static void store(int64_t* out, __m256d i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_castpd_si256(i));
  }
};

// Whether x replaces the best so far, b: it wins, or is a NaN where b is not.
template <bool kMax, class T>
bool replaces(T x, T b) {
  return !(b != b) && ((kMax ? x > b : x < b) || x != x);
}

template <class S, bool kMax>
int64_t arg_run(const typename S::T* p, int64_t n) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int64_t L = S::kWidth;
  int64_t best_i = 0;
  T best = p[0];
  int64_t i = 0;
  if (n >= 2 * L) {
    V bv = S::load(p), bi = Index<S>::first(), cur = bi;
    for (i = L; i + L <= n; i += L) {
      cur = Index<S>::add(cur, L);
      const V x = S::load(p + i);
      const V wins = kMax ? S::gt(x, bv) : S::lt(x, bv);
      const V mask = S::vor(wins, S::andnot(S::isnan(bv), S::isnan(x)));
      bv = S::blend(bv, x, mask);
      bi = S::blend(bi, cur, mask);
    }
    alignas(32) T values[L];
    int64_t index[L];
    S::store(values, bv);
    Index<S>::store(index, bi);
    best = values[0];
    best_i = index[0];
    for (int64_t l = 1; l < L; ++l) {
      const bool nan = values[l] != values[l], best_nan = best != best;
      const bool take = nan ? (!best_nan || index[l] < best_i)
                            : (!best_nan && ((kMax ? values[l] > best : values[l] < best) ||
                                             (values[l] == best && index[l] < best_i)));
      if (take) {
        best = values[l];
        best_i = index[l];
      }
    }
  } else {
    i = 1;
  }
  for (; i < n; ++i) {
    if (replaces<kMax>(p[i], best)) {
      best = p[i];
      best_i = i;
    }
  }
  return best_i;
}

}  // namespace

#define OPD_FOLDS(S, FN)                                                                   \
  {                                                                                        \
    FN<S, Fold::kSum>, FN<S, Fold::kSumSquares>, FN<S, Fold::kSumAbs>, FN<S, Fold::kProd>, \
        FN<S, Fold::kMax>, FN<S, Fold::kMin>                                               \
  }
extern const RunFn<float> kRunF32[kNumFolds] = OPD_FOLDS(F32, fold_run);
extern const RunFn<double> kRunF64[kNumFolds] = OPD_FOLDS(F64, fold_run);
extern const ColumnsFn<float> kColumnsF32[kNumFolds] = OPD_FOLDS(F32, fold_columns);
extern const ColumnsFn<double> kColumnsF64[kNumFolds] = OPD_FOLDS(F64, fold_columns);
#undef OPD_FOLDS
extern const ArgFn<float> kArgF32[2] = {arg_run<F32, false>, arg_run<F32, true>};
extern const ArgFn<double> kArgF64[2] = {arg_run<F64, false>, arg_run<F64, true>};
extern const AnyFn<float> kAnyF32[2] = {any_columns<F32, false>, any_columns<F32, true>};
extern const AnyFn<double> kAnyF64[2] = {any_columns<F64, false>, any_columns<F64, true>};

}  // namespace opd::cpu::reduction::vec::avx2
