#pragma once

// gelu_backward's vectorised array loops, beside unary_vec.h's (Note [SLEEF in the unary
// kernels]); their bodies are in unary_vec_avx2.cpp, the lookup in unary_vec.cpp.

#include <cstdint>

namespace opd::cpu::vec {

// gelu_backward's array form: out[i] = grad[i] * gelu'(self[i]) over n contiguous elements, the
// exact form or the tanh one (Note [The erf of gelu in float] in unary_vec_avx2.cpp); null when
// the CPU lacks AVX2 or FMA.
template <class T>
using GeluBackwardArrayFn = void (*)(const T* grad, const T* self, T* out, int64_t n);
GeluBackwardArrayFn<float> gelu_backward_f32(bool tanh_form);
GeluBackwardArrayFn<double> gelu_backward_f64(bool tanh_form);

template <class T>
GeluBackwardArrayFn<T> gelu_backward_vec(bool tanh_form) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return gelu_backward_f32(tanh_form);
  } else {
    return gelu_backward_f64(tanh_form);
  }
}

}  // namespace opd::cpu::vec
