#pragma once

// Vectorised array loops for the binary kernels of float and double: out[i] = f(a[i], b[i]) over
// n elements, either operand possibly one repeated value (a broadcast scalar), with AVX2 and
// SLEEF as PyTorch's Vectorized<float> and Vectorized<double> (Note [Binary kernels in AVX2]).

#include <cstdint>

#include "cpu/cpu_features.h"

namespace opd::cpu::vec {

// Note [Binary kernels in AVX2]
// binary_vec_avx2.cpp, compiled alone with -mavx2 -mfma as unary_vec_avx2.cpp is (Note [SLEEF in
// the unary kernels]), holds the array loops of the float32/float64 binary kernels; the kernels
// call them for every run whose output is contiguous and whose inputs are each contiguous or
// repeated, and keep their scalar loop for the other runs, the other dtypes, and CPUs without
// AVX2/FMA. Each operation is PyTorch 1.13's vectorised one, so the results are torch's:
//   Remainder  fmod (SLEEF's, exact), plus b where the result is non-zero and its sign differs
//              from b's (Python's %, the sign of the divisor);
//   DivFloor   div_floor_floating: (a - fmod(a, b)) / b, one less where that fmod's sign differs
//              from b's, floored, rounded up where more than 0.5 below; a zero quotient takes
//              the sign of a / b, a zero divisor gives a / b (inf or NaN);
//   Fmod, Atan2 (1 ulp), Hypot (0.5 ulp), Pow (1 ulp), Copysign: SLEEF's;
//   Maximum/Minimum  NaN if either is NaN, else the larger (smaller), the second when equal
//              (maximum(-0.0, 0.0) is 0.0 as in torch's vector loop; its scalar loop, as ours
//              for strided runs, gives the first).
// Division by zero follows IEEE in every operation. SLEEF's fmod gives NaN where a finite a / b
// overflows (fmod(2.5f, 5e-39f)), and so do Remainder and DivFloor there, as PyTorch's vector
// loops do (its scalar tail of a run gives fmod's exact value). A tail shorter than a vector runs
// through the same vector code on a padded copy, so that an element's value does not depend on
// where it falls in a run.
enum class BinaryVecOp {
  Add,
  Sub,
  Mul,
  Div,
  DivTrunc,
  DivFloor,
  Remainder,
  Fmod,
  Atan2,
  Hypot,
  Pow,
  Copysign,
  Maximum,
  Minimum,
};

// out[i] = f(a[i * a_step], b[i * b_step]) for i < n; each step is 0 (one repeated value) or 1.
template <class T>
using BinaryArrayFn = void (*)(const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
                               int64_t n);

namespace avx2 {
extern const BinaryArrayFn<float> kBinaryFloatFns[];
extern const BinaryArrayFn<double> kBinaryDoubleFns[];
extern const int kNumBinaryFns;
}  // namespace avx2

// The array function of `op` for float or double; null when the CPU lacks AVX2 or FMA.
template <class T>
BinaryArrayFn<T> vec_binary(BinaryVecOp op) {
  const int i = static_cast<int>(op);
  if (!cpu::has_avx2_fma() || i >= avx2::kNumBinaryFns) return nullptr;
  if constexpr (sizeof(T) == sizeof(float)) {
    return avx2::kBinaryFloatFns[i];
  } else {
    return avx2::kBinaryDoubleFns[i];
  }
}

}  // namespace opd::cpu::vec
