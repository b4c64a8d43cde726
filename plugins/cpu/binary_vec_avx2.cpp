// The AVX2 bodies of binary_vec.h's array functions; this file alone (with unary_vec_avx2.cpp and
// the other *_avx2.cpp) is compiled with -mavx2 -mfma (plugins/cpu/CMakeLists.txt) and includes
// no header with inline code of the project, so that no AVX2 instruction reaches a function
// another file could pick at link time. See Note [Binary kernels in AVX2] in binary_vec.h.

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>
#include <cstring>

namespace opd::cpu::vec::avx2 {

template <class T>
using BinaryArrayFn = void (*)(const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
                               int64_t n);

namespace {

// The float and double registers under one set of names, so that each operation is written once.
struct F32 {
  using T = float;
  using V = __m256;
  static constexpr int kWidth = 8;
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  template <int kMode>
  static V round(V a) {
    return _mm256_round_ps(a, kMode | _MM_FROUND_NO_EXC);
  }
  template <int kCmp>
  static V cmp(V a, V b) {
    return _mm256_cmp_ps(a, b, kCmp);
  }
  static V and_(V a, V b) { return _mm256_and_ps(a, b); }
  static V xor_(V a, V b) { return _mm256_xor_ps(a, b); }
  static V blend(V a, V b, V mask) { return _mm256_blendv_ps(a, b, mask); }  // mask ? b : a
  static V fmod(V a, V b) { return Sleef_fmodf8_avx2(a, b); }
  static V atan2(V a, V b) { return Sleef_atan2f8_u10avx2(a, b); }
  static V hypot(V a, V b) { return Sleef_hypotf8_u05avx2(a, b); }
  static V pow(V a, V b) { return Sleef_powf8_u10avx2(a, b); }
  static V copysign(V a, V b) { return Sleef_copysignf8_avx2(a, b); }
};

struct F64 {
  using T = double;
  using V = __m256d;
  static constexpr int kWidth = 4;
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V zero() { return _mm256_setzero_pd(); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V max(V a, V b) { return _mm256_max_pd(a, b); }
  static V min(V a, V b) { return _mm256_min_pd(a, b); }
  template <int kMode>
  static V round(V a) {
    return _mm256_round_pd(a, kMode | _MM_FROUND_NO_EXC);
  }
  template <int kCmp>
  static V cmp(V a, V b) {
    return _mm256_cmp_pd(a, b, kCmp);
  }
  static V and_(V a, V b) { return _mm256_and_pd(a, b); }
  static V xor_(V a, V b) { return _mm256_xor_pd(a, b); }
  static V blend(V a, V b, V mask) { return _mm256_blendv_pd(a, b, mask); }
  static V fmod(V a, V b) { return Sleef_fmodd4_avx2(a, b); }
  static V atan2(V a, V b) { return Sleef_atan2d4_u10avx2(a, b); }
  static V hypot(V a, V b) { return Sleef_hypotd4_u05avx2(a, b); }
  static V pow(V a, V b) { return Sleef_powd4_u10avx2(a, b); }
  static V copysign(V a, V b) { return Sleef_copysignd4_avx2(a, b); }
};

// The operations, in BinaryVecOp's order (binary_vec.h).
struct Add {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::add(a, b);
  }
};
struct Sub {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::sub(a, b);
  }
};
struct Mul {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::mul(a, b);
  }
};
struct Div {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::div(a, b);
  }
};
struct DivTrunc {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::template round<_MM_FROUND_TO_ZERO>(R::div(a, b));
  }
};

// Where r is non-zero and its sign differs from b's (r and b not NaN).
template <class R>
typename R::V sign_differs(typename R::V r, typename R::V b) {
  const auto zero = R::zero();
  return R::and_(
      R::template cmp<_CMP_NEQ_UQ>(r, zero),
      R::xor_(R::template cmp<_CMP_LT_OQ>(b, zero), R::template cmp<_CMP_LT_OQ>(r, zero)));
}

struct DivFloor {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    const auto zero = R::zero();
    const auto one = R::set1(1);
    const auto mod = R::fmod(a, b);
    auto div = R::div(R::sub(a, mod), b);
    div = R::blend(div, R::sub(div, one), sign_differs<R>(mod, b));
    auto floordiv = R::template round<_MM_FROUND_TO_NEG_INF>(div);
    floordiv = R::blend(floordiv, R::add(floordiv, one),
                        R::template cmp<_CMP_GT_OQ>(R::sub(div, floordiv), R::set1(0.5)));
    const auto plain = R::div(a, b);
    floordiv = R::blend(floordiv, R::copysign(zero, plain), R::template cmp<_CMP_EQ_OQ>(div, zero));
    return R::blend(floordiv, plain, R::template cmp<_CMP_EQ_OQ>(b, zero));
  }
};
struct Remainder {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    const auto mod = R::fmod(a, b);
    return R::blend(mod, R::add(mod, b), sign_differs<R>(mod, b));
  }
};
struct Fmod {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::fmod(a, b);
  }
};
struct Atan2 {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::atan2(a, b);
  }
};
struct Hypot {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::hypot(a, b);
  }
};
struct Pow {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::pow(a, b);
  }
};
struct Copysign {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::copysign(a, b);
  }
};
// NaN when either is NaN (a + b is then NaN), else the larger; b when a == b (max(-0.0, 0.0) is
// 0.0), as PyTorch's vector loop (max_ps(x, y) is x > y ? x : y).
struct Maximum {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::blend(R::max(a, b), R::add(a, b), R::template cmp<_CMP_UNORD_Q>(a, b));
  }
};
struct Minimum {
  template <class R>
  static typename R::V f(typename R::V a, typename R::V b) {
    return R::blend(R::min(a, b), R::add(a, b), R::template cmp<_CMP_UNORD_Q>(a, b));
  }
};

// Op over n elements, a and b each advancing (kStepA/kStepB 1) or repeated (0).
template <class R, class Op, int kStepA, int kStepB>
void map(const typename R::T* a, const typename R::T* b, typename R::T* out, int64_t n) {
  using T = typename R::T;
  constexpr int kW = R::kWidth;
  const auto va = kStepA == 0 ? R::set1(*a) : R::zero();
  const auto vb = kStepB == 0 ? R::set1(*b) : R::zero();
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    R::store(out + i, Op::template f<R>(kStepA == 0 ? va : R::load(a + i),
                                        kStepB == 0 ? vb : R::load(b + i)));
  }
  if (i < n) {
    const auto bytes = static_cast<size_t>(n - i) * sizeof(T);
    // Padded with ones, so that the unused lanes divide by nothing smaller.
    T bufa[kW], bufb[kW], bufo[kW];
    for (int k = 0; k < kW; ++k) bufa[k] = bufb[k] = T(1);
    if constexpr (kStepA != 0) std::memcpy(bufa, a + i, bytes);
    if constexpr (kStepB != 0) std::memcpy(bufb, b + i, bytes);
    R::store(bufo,
             Op::template f<R>(kStepA == 0 ? va : R::load(bufa), kStepB == 0 ? vb : R::load(bufb)));
    std::memcpy(out + i, bufo, bytes);
  }
}

template <class R, class Op>
void map_any(const typename R::T* a, int64_t a_step, const typename R::T* b, int64_t b_step,
             typename R::T* out, int64_t n) {
  if (a_step == 0 && b_step == 0) return map<R, Op, 0, 0>(a, b, out, n);
  if (a_step == 0) return map<R, Op, 0, 1>(a, b, out, n);
  if (b_step == 0) return map<R, Op, 1, 0>(a, b, out, n);
  map<R, Op, 1, 1>(a, b, out, n);
}

}  // namespace

// In BinaryVecOp's order (binary_vec.h); vec_binary() indexes them.
// clang-format off
#define OPD_BINARY_VEC_OPS(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(DivTrunc) X(DivFloor) X(Remainder) X(Fmod) X(Atan2) X(Hypot) \
  X(Pow) X(Copysign) X(Maximum) X(Minimum)
// clang-format on

#define OPD_F32(Op) &map_any<F32, Op>,
#define OPD_F64(Op) &map_any<F64, Op>,
extern const BinaryArrayFn<float> kBinaryFloatFns[] = {OPD_BINARY_VEC_OPS(OPD_F32)};
extern const BinaryArrayFn<double> kBinaryDoubleFns[] = {OPD_BINARY_VEC_OPS(OPD_F64)};
extern const int kNumBinaryFns = sizeof(kBinaryFloatFns) / sizeof(kBinaryFloatFns[0]);
#undef OPD_F32
#undef OPD_F64
#undef OPD_BINARY_VEC_OPS

}  // namespace opd::cpu::vec::avx2
