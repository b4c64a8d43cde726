// The float and double AVX2 registers under one set of names (F32, F64), so that each vectorised
// loop is written once for both; SLEEF's functions where a loop needs them. Only for the
// *_avx2.cpp files, which alone are compiled with -mavx2 -mfma: the structs are in an unnamed
// namespace, so each of those files has its own copy and no AVX2 instruction reaches a function
// the linker could pick for another file.
#pragma once

#ifndef __AVX2__
#error "cpu/vec_avx2.h is for the files compiled with -mavx2 -mfma (plugins/cpu/CMakeLists.txt)"
#endif

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

namespace opd::cpu::avx2 {
namespace {

// 8 floats in one register.
struct F32 {
  using T = float;
  using V = __m256;
  static constexpr int64_t kWidth = 8;
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V set1(T x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
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
  static V gt(V a, V b) { return cmp<_CMP_GT_OQ>(a, b); }
  static V lt(V a, V b) { return cmp<_CMP_LT_OQ>(a, b); }
  static V isnan(V a) { return cmp<_CMP_UNORD_Q>(a, a); }
  static V and_(V a, V b) { return _mm256_and_ps(a, b); }
  static V vor(V a, V b) { return _mm256_or_ps(a, b); }
  static V xor_(V a, V b) { return _mm256_xor_ps(a, b); }
  static V andnot(V a, V b) { return _mm256_andnot_ps(a, b); }
  static V blend(V a, V b, V mask) { return _mm256_blendv_ps(a, b, mask); }  // mask ? b : a
  static V fmod(V a, V b) { return Sleef_fmodf8_avx2(a, b); }
  static V atan2(V a, V b) { return Sleef_atan2f8_u10avx2(a, b); }
  static V hypot(V a, V b) { return Sleef_hypotf8_u05avx2(a, b); }
  static V pow(V a, V b) { return Sleef_powf8_u10avx2(a, b); }
  static V copysign(V a, V b) { return Sleef_copysignf8_avx2(a, b); }
};

// 4 doubles in one register.
struct F64 {
  using T = double;
  using V = __m256d;
  static constexpr int64_t kWidth = 4;
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V set1(T x) { return _mm256_set1_pd(x); }
  static V zero() { return _mm256_setzero_pd(); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V abs(V a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
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
  static V gt(V a, V b) { return cmp<_CMP_GT_OQ>(a, b); }
  static V lt(V a, V b) { return cmp<_CMP_LT_OQ>(a, b); }
  static V isnan(V a) { return cmp<_CMP_UNORD_Q>(a, a); }
  static V and_(V a, V b) { return _mm256_and_pd(a, b); }
  static V vor(V a, V b) { return _mm256_or_pd(a, b); }
  static V xor_(V a, V b) { return _mm256_xor_pd(a, b); }
  static V andnot(V a, V b) { return _mm256_andnot_pd(a, b); }
  static V blend(V a, V b, V mask) { return _mm256_blendv_pd(a, b, mask); }  // mask ? b : a
  static V fmod(V a, V b) { return Sleef_fmodd4_avx2(a, b); }
  static V atan2(V a, V b) { return Sleef_atan2d4_u10avx2(a, b); }
  static V hypot(V a, V b) { return Sleef_hypotd4_u05avx2(a, b); }
  static V pow(V a, V b) { return Sleef_powd4_u10avx2(a, b); }
  static V copysign(V a, V b) { return Sleef_copysignd4_avx2(a, b); }
};

}  // namespace
}  // namespace opd::cpu::avx2
