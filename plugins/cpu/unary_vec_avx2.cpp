// The AVX2 bodies of unary_vec.h's array functions; this file alone is compiled with
// -mavx2 -mfma (plugins/cpu/CMakeLists.txt) and includes no header with inline code of the
// project, so that no AVX2 instruction reaches a function another file could pick at link time.
// See Note [SLEEF in the unary kernels].

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>
#include <cstring>

namespace opd::cpu::vec::avx2 {

template <class T>
using ArrayFn = void (*)(const T* in, T* out, int64_t n);
template <class T>
using GeluBackwardArrayFn = void (*)(const T* grad, const T* self, T* out, int64_t n);

namespace {

// 8 floats or 4 doubles at a time, the tail through a padded copy.
template <class F>
void map_f32(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, F::f(_mm256_loadu_ps(in + i)));
  if (i < n) {
    const auto bytes = static_cast<size_t>(n - i) * sizeof(float);
    alignas(32) float buf[8] = {};
    std::memcpy(buf, in + i, bytes);
    _mm256_store_ps(buf, F::f(_mm256_load_ps(buf)));
    std::memcpy(out + i, buf, bytes);
  }
}

template <class F>
void map_f64(const double* in, double* out, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(out + i, F::d(_mm256_loadu_pd(in + i)));
  if (i < n) {
    const auto bytes = static_cast<size_t>(n - i) * sizeof(double);
    alignas(32) double buf[4] = {};
    std::memcpy(buf, in + i, bytes);
    _mm256_store_pd(buf, F::d(_mm256_load_pd(buf)));
    std::memcpy(out + i, buf, bytes);
  }
}

// One SLEEF function pair: Sleef_<name>f8_<ulp>avx2 and Sleef_<name>d4_<ulp>avx2.
#define OPD_SLEEF_OP(Op, name, ulp)                                         \
  struct Op {                                                               \
    static __m256 f(__m256 x) { return Sleef_##name##f8_##ulp##avx2(x); }   \
    static __m256d d(__m256d x) { return Sleef_##name##d4_##ulp##avx2(x); } \
  };
OPD_SLEEF_OP(Exp, exp, u10)
OPD_SLEEF_OP(Log, log, u10)
OPD_SLEEF_OP(Sin, sin, u10)
OPD_SLEEF_OP(Cos, cos, u10)
OPD_SLEEF_OP(Tanh, tanh, u10)
OPD_SLEEF_OP(Erf, erf, u10)
OPD_SLEEF_OP(Erfc, erfc, u15)
OPD_SLEEF_OP(Log1p, log1p, u10)
OPD_SLEEF_OP(Expm1, expm1, u10)
OPD_SLEEF_OP(Log2, log2, u10)
OPD_SLEEF_OP(Log10, log10, u10)
OPD_SLEEF_OP(Exp2, exp2, u10)
OPD_SLEEF_OP(Asin, asin, u10)
OPD_SLEEF_OP(Acos, acos, u10)
OPD_SLEEF_OP(Atan, atan, u10)
OPD_SLEEF_OP(Asinh, asinh, u10)
OPD_SLEEF_OP(Acosh, acosh, u10)
OPD_SLEEF_OP(Atanh, atanh, u10)
OPD_SLEEF_OP(Sinh, sinh, u10)
OPD_SLEEF_OP(Cosh, cosh, u10)
OPD_SLEEF_OP(Tan, tan, u10)
#undef OPD_SLEEF_OP

// 1 / (1 + exp(-x)), as PyTorch's vectorised sigmoid.
struct Sigmoid {
  static __m256 f(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
  }
  static __m256d d(__m256d x) {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d e = Sleef_expd4_u10avx2(_mm256_sub_pd(_mm256_setzero_pd(), x));
    return _mm256_div_pd(one, _mm256_add_pd(one, e));
  }
};
struct Sqrt {
  static __m256 f(__m256 x) { return _mm256_sqrt_ps(x); }
  static __m256d d(__m256d x) { return _mm256_sqrt_pd(x); }
};
struct Rsqrt {
  static __m256 f(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(x)); }
  static __m256d d(__m256d x) { return _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(x)); }
};
struct Reciprocal {
  static __m256 f(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), x); }
  static __m256d d(__m256d x) { return _mm256_div_pd(_mm256_set1_pd(1.0), x); }
};
// The rounding functions; Round is half to even (nearbyint), as torch.round.
template <int kMode>
struct Rounding {
  static __m256 f(__m256 x) { return _mm256_round_ps(x, kMode | _MM_FROUND_NO_EXC); }
  static __m256d d(__m256d x) { return _mm256_round_pd(x, kMode | _MM_FROUND_NO_EXC); }
};
using Floor = Rounding<_MM_FROUND_TO_NEG_INF>;
using Ceil = Rounding<_MM_FROUND_TO_POS_INF>;
using Trunc = Rounding<_MM_FROUND_TO_ZERO>;
using Round = Rounding<_MM_FROUND_TO_NEAREST_INT>;

// Note [The erf of gelu in float]
// PyTorch 1.13's float gelu (and gelu_backward) does not call SLEEF's erf, as torch.erf does, but
// Vectorized<float>::erf: Abramowitz and Stegun's 7.1.26, erf(z) = 1 - (a1 s + ... + a5 s^5)
// exp(-z^2) with s = 1 / (1 + p z) for z >= 0 (odd in z), absolute error below 1.5e-7, about
// five times faster than Sleef_erff8_u10. The float gelus here compute it the same way, so that
// their values and speed are torch's; exp(-z^2), z = x / sqrt(2), is also the normal density
// gelu_backward needs (up to 1 / sqrt(2 pi)). Double keeps SLEEF's 1-ulp erf, as torch's.
struct GeluErfF32 {
  // erf(z), and exp(-z^2) in *gauss.
  static __m256 erf(__m256 z, __m256* gauss) {
    const __m256 sign = _mm256_and_ps(z, _mm256_set1_ps(-0.0f));
    const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), z);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 s = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), a, one));
    __m256 poly = _mm256_set1_ps(1.061405429f);
    poly = _mm256_fmadd_ps(poly, s, _mm256_set1_ps(-1.453152027f));
    poly = _mm256_fmadd_ps(poly, s, _mm256_set1_ps(1.421413741f));
    poly = _mm256_fmadd_ps(poly, s, _mm256_set1_ps(-0.284496736f));
    poly = _mm256_fmadd_ps(poly, s, _mm256_set1_ps(0.254829592f));
    *gauss = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(z, z)));
    // 1 - poly * s * exp(-z^2), with z's sign.
    const __m256 r = _mm256_fnmadd_ps(_mm256_mul_ps(*gauss, s), poly, one);
    return _mm256_xor_ps(r, sign);
  }
};

// x * (1 + erf(x / sqrt(2))) / 2.
struct GeluErf {
  static __m256 f(__m256 x) {
    __m256 gauss;
    const __m256 e =
        GeluErfF32::erf(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f)), &gauss);
    return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)),
                         _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  }
  static __m256d d(__m256d x) {
    const __m256d e = Sleef_erfd4_u10avx2(_mm256_mul_pd(x, _mm256_set1_pd(0.70710678118654752)));
    return _mm256_mul_pd(_mm256_mul_pd(x, _mm256_set1_pd(0.5)),
                         _mm256_add_pd(_mm256_set1_pd(1.0), e));
  }
};
// x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2.
struct GeluTanh {
  static __m256 f(__m256 x) {
    const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
    const __m256 inner = _mm256_mul_ps(_mm256_set1_ps(0.79788456080286535588f),
                                       _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
    const __m256 t = Sleef_tanhf8_u10avx2(inner);
    return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)),
                         _mm256_add_ps(_mm256_set1_ps(1.0f), t));
  }
  static __m256d d(__m256d x) {
    const __m256d x3 = _mm256_mul_pd(_mm256_mul_pd(x, x), x);
    const __m256d inner = _mm256_mul_pd(_mm256_set1_pd(0.79788456080286535588),
                                        _mm256_fmadd_pd(_mm256_set1_pd(0.044715), x3, x));
    const __m256d t = Sleef_tanhd4_u10avx2(inner);
    return _mm256_mul_pd(_mm256_mul_pd(x, _mm256_set1_pd(0.5)),
                         _mm256_add_pd(_mm256_set1_pd(1.0), t));
  }
};

// gelu_backward: grad * (Phi(x) + x phi(x)), Phi and phi the standard normal CDF and density.
struct GeluErfBackward {
  static __m256 f(__m256 grad, __m256 x) {
    __m256 gauss;  // exp(-x^2 / 2)
    const __m256 e =
        GeluErfF32::erf(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752f)), &gauss);
    const __m256 cdf = _mm256_fmadd_ps(_mm256_set1_ps(0.5f), e, _mm256_set1_ps(0.5f));
    const __m256 pdf = _mm256_mul_ps(_mm256_set1_ps(0.39894228040143267794f), gauss);
    return _mm256_mul_ps(grad, _mm256_fmadd_ps(x, pdf, cdf));
  }
  static __m256d d(__m256d grad, __m256d x) {
    const __m256d e = Sleef_erfd4_u10avx2(_mm256_mul_pd(x, _mm256_set1_pd(0.70710678118654752)));
    const __m256d gauss =
        Sleef_expd4_u10avx2(_mm256_mul_pd(_mm256_set1_pd(-0.5), _mm256_mul_pd(x, x)));
    const __m256d cdf = _mm256_fmadd_pd(_mm256_set1_pd(0.5), e, _mm256_set1_pd(0.5));
    const __m256d pdf = _mm256_mul_pd(_mm256_set1_pd(0.39894228040143267794), gauss);
    return _mm256_mul_pd(grad, _mm256_fmadd_pd(x, pdf, cdf));
  }
};
// The tanh form: with u = sqrt(2 / pi) (x + 0.044715 x^3) and t = tanh(u), the derivative of
// x (1 + t) / 2 is (1 + t) / 2 + x (1 - t^2) sqrt(2 / pi) (1 + 3 * 0.044715 x^2) / 2.
template <class V, class Ops>
V gelu_tanh_backward(V grad, V x) {
  const V beta = Ops::set(0.79788456080286535588), kappa = Ops::set(0.044715);
  const V half = Ops::set(0.5), one = Ops::set(1.0);
  const V x_sq = Ops::mul(x, x);
  const V t = Ops::tanh(Ops::mul(beta, Ops::fma(Ops::mul(kappa, x_sq), x, x)));
  const V du_dx = Ops::mul(beta, Ops::fma(Ops::mul(Ops::set(3.0), kappa), x_sq, one));
  const V left = Ops::mul(half, Ops::add(one, t));
  const V right = Ops::mul(Ops::mul(Ops::mul(half, x), Ops::fnma(t, t, one)), du_dx);
  return Ops::mul(grad, Ops::add(left, right));
}
struct F32Ops {
  static __m256 set(double v) { return _mm256_set1_ps(static_cast<float>(v)); }
  static __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
  static __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
  static __m256 fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  static __m256 fnma(__m256 a, __m256 b, __m256 c) { return _mm256_fnmadd_ps(a, b, c); }
  static __m256 tanh(__m256 a) { return Sleef_tanhf8_u10avx2(a); }
};
struct F64Ops {
  static __m256d set(double v) { return _mm256_set1_pd(v); }
  static __m256d mul(__m256d a, __m256d b) { return _mm256_mul_pd(a, b); }
  static __m256d add(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
  static __m256d fma(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
  static __m256d fnma(__m256d a, __m256d b, __m256d c) { return _mm256_fnmadd_pd(a, b, c); }
  static __m256d tanh(__m256d a) { return Sleef_tanhd4_u10avx2(a); }
};
struct GeluTanhBackward {
  static __m256 f(__m256 grad, __m256 x) { return gelu_tanh_backward<__m256, F32Ops>(grad, x); }
  static __m256d d(__m256d grad, __m256d x) { return gelu_tanh_backward<__m256d, F64Ops>(grad, x); }
};

// out[i] = F(a[i], b[i]) over n contiguous elements, the tail through padded copies.
template <class F>
void map2_f32(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, F::f(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  if (i < n) {
    const auto bytes = static_cast<size_t>(n - i) * sizeof(float);
    alignas(32) float buf_a[8] = {}, buf_b[8] = {};
    std::memcpy(buf_a, a + i, bytes);
    std::memcpy(buf_b, b + i, bytes);
    _mm256_store_ps(buf_a, F::f(_mm256_load_ps(buf_a), _mm256_load_ps(buf_b)));
    std::memcpy(out + i, buf_a, bytes);
  }
}
template <class F>
void map2_f64(const double* a, const double* b, double* out, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    _mm256_storeu_pd(out + i, F::d(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i)));
  }
  if (i < n) {
    const auto bytes = static_cast<size_t>(n - i) * sizeof(double);
    alignas(32) double buf_a[4] = {}, buf_b[4] = {};
    std::memcpy(buf_a, a + i, bytes);
    std::memcpy(buf_b, b + i, bytes);
    _mm256_store_pd(buf_a, F::d(_mm256_load_pd(buf_a), _mm256_load_pd(buf_b)));
    std::memcpy(out + i, buf_a, bytes);
  }
}

}  // namespace

// In VecOp's order (unary_vec.h); unary_vec.cpp indexes them.
// clang-format off
#define OPD_VEC_OPS(X) \
  X(Exp) X(Log) X(Sin) X(Cos) X(Tanh) X(Sigmoid) X(Sqrt) X(Rsqrt) \
  X(Reciprocal) X(Erf) X(Erfc) X(Log1p) X(Expm1) X(Log2) X(Log10) X(Exp2) \
  X(Asin) X(Acos) X(Atan) X(Asinh) X(Acosh) X(Atanh) X(Sinh) X(Cosh) \
  X(Tan) X(Floor) X(Ceil) X(Trunc) X(Round) X(GeluErf) X(GeluTanh)
// clang-format on

#define OPD_F32(Op) &map_f32<Op>,
#define OPD_F64(Op) &map_f64<Op>,
extern const ArrayFn<float> kFloatFns[] = {OPD_VEC_OPS(OPD_F32)};
extern const ArrayFn<double> kDoubleFns[] = {OPD_VEC_OPS(OPD_F64)};
extern const int kNumFns = sizeof(kFloatFns) / sizeof(kFloatFns[0]);

// gelu_backward's array functions, the exact form then the tanh form (unary_vec.cpp).
extern const GeluBackwardArrayFn<float> kGeluBackwardFloatFns[] = {&map2_f32<GeluErfBackward>,
                                                                   &map2_f32<GeluTanhBackward>};
extern const GeluBackwardArrayFn<double> kGeluBackwardDoubleFns[] = {&map2_f64<GeluErfBackward>,
                                                                     &map2_f64<GeluTanhBackward>};

}  // namespace opd::cpu::vec::avx2
