// The impls of the structured unary groups that existed before the others (Note [Structured
// kernels] in tools/gen/structured.h: opd-gen writes the functional, in-place and out= kernels
// around them): exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid (floating; integral inputs compute
// in Float), neg, abs; gelu, a kernel of its own; and relu, clamp_min with 0 (common::relu, which
// the Meta kernel calls too).

#include <cmath>
#include <type_traits>
#include <utility>

#include "common/elementwise.h"
#include "cpu/elementwise_loops.h"
#include "cpu/unary_loops.h"
#include "opd/error.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cpu::cpu_kernel;
using cpu::floating_unary_kernel;
using cpu::vec::VecOp;

}  // namespace

void exp_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "exp_vml_cpu", VecOp::Exp, [](auto x) { return std::exp(x); });
}
void log_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "log_vml_cpu", VecOp::Log, [](auto x) { return std::log(x); });
}
void sqrt_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "sqrt_vml_cpu", VecOp::Sqrt, [](auto x) { return std::sqrt(x); });
}
void rsqrt_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "rsqrt_cpu", VecOp::Rsqrt,
                        [](auto x) { return decltype(x)(1) / std::sqrt(x); });
}
void sin_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "sin_vml_cpu", VecOp::Sin, [](auto x) { return std::sin(x); });
}
void cos_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "cos_vml_cpu", VecOp::Cos, [](auto x) { return std::cos(x); });
}
void tanh_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "tanh_vml_cpu", VecOp::Tanh, [](auto x) { return std::tanh(x); });
}
void sigmoid_out(const TensorIterator& iter, const Tensor&) {
  floating_unary_kernel(iter, "sigmoid_cpu", VecOp::Sigmoid, [](auto x) {
    using T = decltype(x);
    return T(1) / (T(1) + std::exp(-x));
  });
}

void neg_out(const TensorIterator& iter, const Tensor&) {
  OPD_DISPATCH_ALL_TYPES_AND2(kHalf, kBFloat16, iter.common_dtype(), "neg_cpu", [&] {
    cpu_kernel(iter, [](scalar_t x) -> scalar_t { return static_cast<scalar_t>(-cpu::opmath(x)); });
  });
}

void abs_out(const TensorIterator& iter, const Tensor&) {
  OPD_DISPATCH_ALL_TYPES_AND2(kHalf, kBFloat16, iter.common_dtype(), "abs_cpu", [&] {
    cpu_kernel(iter, [](scalar_t x) -> scalar_t {
      const auto v = cpu::opmath(x);
      if constexpr (std::is_unsigned_v<scalar_t>) {
        return x;
      } else if constexpr (std::is_floating_point_v<decltype(v)>) {
        return static_cast<scalar_t>(std::abs(v));
      } else {
        return v < 0 ? static_cast<scalar_t>(-v) : x;
      }
    });
  });
}

Tensor relu(const Tensor& self) { return common::relu(self); }
Tensor& relu_(Tensor& self) { return common::relu_(self); }

// gelu(x) = x * Phi(x), Phi the standard normal CDF; the tanh form approximates Phi(x) by
// (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2.
Tensor gelu(const Tensor& self, std::string_view approximate) {
  TensorIterator iter = common::gelu_meta(Tensor(), self, approximate);
  if (common::gelu_approximation(approximate) == common::GeluApproximation::Tanh) {
    floating_unary_kernel(iter, "GeluKernelImpl", VecOp::GeluTanh, [](auto x) {
      using T = decltype(x);
      const auto beta = static_cast<T>(M_SQRT2 * M_2_SQRTPI * 0.5);  // sqrt(2 / pi)
      const auto kappa = static_cast<T>(0.044715);
      const T inner = beta * (x + kappa * x * x * x);
      return T(0.5) * x * (T(1) + std::tanh(inner));
    });
  } else {
    floating_unary_kernel(iter, "GeluKernelImpl", VecOp::GeluErf, [](auto x) {
      using T = decltype(x);
      return x * T(0.5) * (T(1) + std::erf(x * static_cast<T>(M_SQRT1_2)));
    });
  }
  return std::move(iter).output();
}

}  // namespace opd::native
