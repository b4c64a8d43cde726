// The impls of the floating unary groups added with Operators I: reciprocal, log1p, expm1, log2,
// log10, exp2, erf, erfc, erfinv, the inverse and hyperbolic trigonometric functions and tan.
// Integral and bool inputs compute in Float (the meta functions in common/unary.cpp); float and
// double are vectorised with SLEEF where it has the function (cpu/unary_vec.h).

#include <cmath>
#include <limits>

#include "cpu/unary_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cpu::floating_unary_kernel;
using cpu::vec::VecOp;

// The inverse error function: an initial guess from the approximation of M. Giles ("Approximating
// the erfinv function", 2010), refined by two Newton steps on erf(x) - y, which brings it to the
// type's precision. erfinv(+-1) = +-inf; outside [-1, 1] NaN.
template <class T>
T erfinv_value(T y) {
  if (std::isnan(y) || y < T(-1) || y > T(1)) return std::numeric_limits<T>::quiet_NaN();
  if (y == T(1)) return std::numeric_limits<T>::infinity();
  if (y == T(-1)) return -std::numeric_limits<T>::infinity();
  const double yd = static_cast<double>(y);
  double w = -std::log((1.0 - yd) * (1.0 + yd));
  double x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    x = p * yd;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
    x = p * yd;
  }
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 2; ++i) {
    const double d = two_over_sqrt_pi * std::exp(-x * x);
    if (d == 0.0) break;
    x -= (std::erf(x) - yd) / d;
  }
  return static_cast<T>(x);
}

}  // namespace

// One impl per operator: its kernel name (PyTorch's), SLEEF function (or none), scalar form.
#define OPD_FLOATING_IMPL(op, kernel, vec_op, expr)          \
  void op##_out(const TensorIterator& iter, const Tensor&) { \
    floating_unary_kernel(iter, kernel, vec_op, [](auto x) { \
      using T [[maybe_unused]] = decltype(x);                \
      return static_cast<T>(expr);                           \
    });                                                      \
  }
OPD_FLOATING_IMPL(reciprocal, "reciprocal_cpu", VecOp::Reciprocal, T(1) / x)
OPD_FLOATING_IMPL(log1p, "log1p_vml_cpu", VecOp::Log1p, std::log1p(x))
OPD_FLOATING_IMPL(expm1, "expm1_vml_cpu", VecOp::Expm1, std::expm1(x))
OPD_FLOATING_IMPL(log2, "log2_vml_cpu", VecOp::Log2, std::log2(x))
OPD_FLOATING_IMPL(log10, "log10_vml_cpu", VecOp::Log10, std::log10(x))
OPD_FLOATING_IMPL(exp2, "exp2", VecOp::Exp2, std::exp2(x))
OPD_FLOATING_IMPL(erf, "erf_vml_cpu", VecOp::Erf, std::erf(x))
OPD_FLOATING_IMPL(erfc, "erfc_vml_cpu", VecOp::Erfc, std::erfc(x))
OPD_FLOATING_IMPL(erfinv, "erfinv_vml_cpu", std::nullopt, erfinv_value(x))
OPD_FLOATING_IMPL(asin, "asin_vml_cpu", VecOp::Asin, std::asin(x))
OPD_FLOATING_IMPL(acos, "acos_vml_cpu", VecOp::Acos, std::acos(x))
OPD_FLOATING_IMPL(atan, "atan_vml_cpu", VecOp::Atan, std::atan(x))
OPD_FLOATING_IMPL(asinh, "asinh_cpu", VecOp::Asinh, std::asinh(x))
OPD_FLOATING_IMPL(acosh, "acosh_cpu", VecOp::Acosh, std::acosh(x))
OPD_FLOATING_IMPL(atanh, "atanh_cpu", VecOp::Atanh, std::atanh(x))
OPD_FLOATING_IMPL(sinh, "sinh_cpu", VecOp::Sinh, std::sinh(x))
OPD_FLOATING_IMPL(cosh, "cosh_cpu", VecOp::Cosh, std::cosh(x))
OPD_FLOATING_IMPL(tan, "tan_vml_cpu", VecOp::Tan, std::tan(x))
#undef OPD_FLOATING_IMPL

}  // namespace opd::native
