// Unary functions on the CPU: neg, abs, the floating functions (exp, log, sqrt, rsqrt, sin, cos,
// tanh, sigmoid; integral inputs compute in Float), relu, gelu, clamp.

#include <cmath>
#include <type_traits>
#include <utility>

#include "common/elementwise.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cpu::cpu_kernel;

// Runs f(x) in the iterator's (floating) compute dtype and returns the output.
template <class F>
Tensor unary_float(std::string_view op, const char* kernel_name, const Tensor& self, F f) {
  TensorIterator iter = common::unary_float_meta(op, Tensor(), self);
  OPD_DISPATCH_FLOATING_TYPES(iter.common_dtype(), kernel_name, [&] {
    cpu_kernel(iter, [f](scalar_t x) -> scalar_t { return f(x); });
  });
  return std::move(iter).output();
}

void relu_kernel(const TensorIterator& iter) {
  OPD_DISPATCH_ALL_TYPES(iter.common_dtype(), "relu_cpu", [&] {
    // `x < 0` keeps NaN, as PyTorch's relu does.
    cpu_kernel(iter, [](scalar_t x) -> scalar_t { return x < scalar_t(0) ? scalar_t(0) : x; });
  });
}

}  // namespace

Tensor neg(const Tensor& self) {
  TensorIterator iter = common::neg_meta(Tensor(), self);
  OPD_DISPATCH_ALL_TYPES(iter.common_dtype(), "neg_cpu", [&] {
    cpu_kernel(iter, [](scalar_t x) -> scalar_t { return static_cast<scalar_t>(-x); });
  });
  return std::move(iter).output();
}

Tensor abs(const Tensor& self) {
  TensorIterator iter = common::abs_meta(Tensor(), self);
  OPD_DISPATCH_ALL_TYPES(iter.common_dtype(), "abs_cpu", [&] {
    cpu_kernel(iter, [](scalar_t x) -> scalar_t {
      if constexpr (std::is_unsigned_v<scalar_t>) {
        return x;
      } else if constexpr (std::is_floating_point_v<scalar_t>) {
        return std::abs(x);
      } else {
        return x < 0 ? static_cast<scalar_t>(-x) : x;
      }
    });
  });
  return std::move(iter).output();
}

Tensor exp(const Tensor& self) {
  return unary_float("exp", "exp_cpu", self, [](auto x) { return std::exp(x); });
}
Tensor log(const Tensor& self) {
  return unary_float("log", "log_cpu", self, [](auto x) { return std::log(x); });
}
Tensor sqrt(const Tensor& self) {
  return unary_float("sqrt", "sqrt_cpu", self, [](auto x) { return std::sqrt(x); });
}
Tensor rsqrt(const Tensor& self) {
  return unary_float("rsqrt", "rsqrt_cpu", self,
                     [](auto x) { return decltype(x)(1) / std::sqrt(x); });
}
Tensor sin(const Tensor& self) {
  return unary_float("sin", "sin_cpu", self, [](auto x) { return std::sin(x); });
}
Tensor cos(const Tensor& self) {
  return unary_float("cos", "cos_cpu", self, [](auto x) { return std::cos(x); });
}
Tensor tanh(const Tensor& self) {
  return unary_float("tanh", "tanh_cpu", self, [](auto x) { return std::tanh(x); });
}
Tensor sigmoid(const Tensor& self) {
  return unary_float("sigmoid", "sigmoid_cpu", self, [](auto x) {
    using T = decltype(x);
    return T(1) / (T(1) + std::exp(-x));
  });
}

Tensor relu(const Tensor& self) {
  TensorIterator iter = common::relu_meta(Tensor(), self);
  relu_kernel(iter);
  return std::move(iter).output();
}

Tensor& relu_(Tensor& self) {
  TensorIterator iter = common::relu_meta(self, self);
  relu_kernel(iter);
  self.bump_version();
  return self;
}

// gelu(x) = x * Phi(x), Phi the standard normal CDF; the tanh form approximates Phi(x) by
// (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2.
Tensor gelu(const Tensor& self, std::string_view approximate) {
  TensorIterator iter = common::gelu_meta(Tensor(), self, approximate);
  const bool tanh_form = common::gelu_approximation(approximate) == common::GeluApproximation::Tanh;
  OPD_DISPATCH_FLOATING_TYPES(iter.common_dtype(), "GeluKernelImpl", [&] {
    if (tanh_form) {
      cpu_kernel(iter, [](scalar_t x) -> scalar_t {
        const auto beta = static_cast<scalar_t>(M_SQRT2 * M_2_SQRTPI * 0.5);  // sqrt(2 / pi)
        const auto kappa = static_cast<scalar_t>(0.044715);
        const scalar_t inner = beta * (x + kappa * x * x * x);
        return scalar_t(0.5) * x * (scalar_t(1) + std::tanh(inner));
      });
    } else {
      cpu_kernel(iter, [](scalar_t x) -> scalar_t {
        return x * scalar_t(0.5) * (scalar_t(1) + std::erf(x * static_cast<scalar_t>(M_SQRT1_2)));
      });
    }
  });
  return std::move(iter).output();
}

// min(max(x, min), max): NaN stays NaN; min > max gives max everywhere, as in PyTorch.
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max) {
  TensorIterator iter = common::clamp_meta(Tensor(), self, min, max);
  OPD_DISPATCH_ALL_TYPES(iter.common_dtype(), "clamp_scalar_cpu", [&] {
    if (min && max) {
      const auto lo = min->to<scalar_t>(), hi = max->to<scalar_t>();
      cpu_kernel(iter, [lo, hi](scalar_t x) -> scalar_t {
        const scalar_t low_clamped = x < lo ? lo : x;
        return hi < low_clamped ? hi : low_clamped;
      });
    } else if (min) {
      const auto lo = min->to<scalar_t>();
      cpu_kernel(iter, [lo](scalar_t x) -> scalar_t { return x < lo ? lo : x; });
    } else {
      const auto hi = max->to<scalar_t>();
      cpu_kernel(iter, [hi](scalar_t x) -> scalar_t { return hi < x ? hi : x; });
    }
  });
  return std::move(iter).output();
}

}  // namespace opd::native
