#pragma once

// Vectorised array loops for the unary kernels: out[i] = f(in[i]) over n contiguous elements,
// with SLEEF's AVX2 functions for the transcendental ones, as PyTorch's Vectorized<float> and
// Vectorized<double> call them (Note [SLEEF in the unary kernels]).

#include <cstdint>

namespace opd::cpu::vec {

// Note [SLEEF in the unary kernels]
// PyTorch's CPU kernels for exp, log, sin, tanh... call SLEEF on 8 floats (4 doubles) at a time,
// choosing the 1-ulp variants (u10; erfc is u15, as SLEEF has no other), and build sigmoid,
// reciprocal, rsqrt and the rounding functions from AVX2 arithmetic. unary_vec.cpp does the
// same, compiled alone with -mavx2 -mfma (its functions are only called after the CPU is found
// to have both, see vec_unary()); everywhere else the kernels run their scalar loop, as they
// do for strided runs, other dtypes and elements the iterator must convert. A tail shorter than
// a vector is computed by the same vector function on a padded copy, so that an element's value
// does not depend on where it falls in a run.
enum class VecOp {
  Exp,
  Log,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Erf,
  Erfc,
  Log1p,
  Expm1,
  Log2,
  Log10,
  Exp2,
  Asin,
  Acos,
  Atan,
  Asinh,
  Acosh,
  Atanh,
  Sinh,
  Cosh,
  Tan,
  Floor,
  Ceil,
  Trunc,
  Round,
  GeluErf,
  GeluTanh,
};

template <class T>
using ArrayFn = void (*)(const T* in, T* out, int64_t n);

// The array function of `op` for float or double; null when the CPU lacks AVX2 or FMA.
ArrayFn<float> vec_unary_f32(VecOp op);
ArrayFn<double> vec_unary_f64(VecOp op);

template <class T>
ArrayFn<T> vec_unary(VecOp op) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return vec_unary_f32(op);
  } else {
    return vec_unary_f64(op);
  }
}

}  // namespace opd::cpu::vec
