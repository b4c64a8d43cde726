// unary_vec.h's lookup: the AVX2 array functions of unary_vec_avx2.cpp when the CPU has AVX2 and
// FMA (Note [SLEEF in the unary kernels]).

#include "cpu/unary_vec.h"

#include "cpu/cpu_features.h"
#include "cpu/unary_vec_gelu.h"

namespace opd::cpu::vec {

namespace avx2 {
extern const ArrayFn<float> kFloatFns[];
extern const ArrayFn<double> kDoubleFns[];
extern const int kNumFns;
extern const GeluBackwardArrayFn<float> kGeluBackwardFloatFns[];
extern const GeluBackwardArrayFn<double> kGeluBackwardDoubleFns[];
}  // namespace avx2

ArrayFn<float> vec_unary_f32(VecOp op) {
  const int i = static_cast<int>(op);
  return has_avx2_fma() && i < avx2::kNumFns ? avx2::kFloatFns[i] : nullptr;
}

ArrayFn<double> vec_unary_f64(VecOp op) {
  const int i = static_cast<int>(op);
  return has_avx2_fma() && i < avx2::kNumFns ? avx2::kDoubleFns[i] : nullptr;
}

GeluBackwardArrayFn<float> gelu_backward_f32(bool tanh_form) {
  return has_avx2_fma() ? avx2::kGeluBackwardFloatFns[tanh_form ? 1 : 0] : nullptr;
}

GeluBackwardArrayFn<double> gelu_backward_f64(bool tanh_form) {
  return has_avx2_fma() ? avx2::kGeluBackwardDoubleFns[tanh_form ? 1 : 0] : nullptr;
}

}  // namespace opd::cpu::vec
