// unary_vec.h's lookup: the AVX2 array functions of unary_vec_avx2.cpp when the CPU has AVX2 and
// FMA (Note [SLEEF in the unary kernels]).

#include "cpu/unary_vec.h"

#include "cpu/cpu_features.h"

namespace opd::cpu::vec {

namespace avx2 {
extern const ArrayFn<float> kFloatFns[];
extern const ArrayFn<double> kDoubleFns[];
extern const int kNumFns;
}  // namespace avx2

ArrayFn<float> vec_unary_f32(VecOp op) {
  const int i = static_cast<int>(op);
  return has_avx2_fma() && i < avx2::kNumFns ? avx2::kFloatFns[i] : nullptr;
}

ArrayFn<double> vec_unary_f64(VecOp op) {
  const int i = static_cast<int>(op);
  return has_avx2_fma() && i < avx2::kNumFns ? avx2::kDoubleFns[i] : nullptr;
}

}  // namespace opd::cpu::vec
