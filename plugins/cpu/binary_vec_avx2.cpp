// The AVX2 bodies of binary_vec.h's array functions; this file alone (with unary_vec_avx2.cpp and
// the other *_avx2.cpp) is compiled with -mavx2 -mfma (plugins/cpu/CMakeLists.txt) and includes
// no header with inline code of the project but cpu/vec_avx2.h (whose structs each AVX2 file
// has a copy of its own), so that no AVX2 instruction reaches a function another file could
// pick at link time. See Note [Binary kernels in AVX2] in binary_vec.h.

#include <cstdint>
#include <cstring>

#include "cpu/vec_avx2.h"

namespace opd::cpu::vec::avx2 {

template <class T>
using BinaryArrayFn = void (*)(const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
                               int64_t n);

namespace {

using cpu::avx2::F32;
using cpu::avx2::F64;

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
