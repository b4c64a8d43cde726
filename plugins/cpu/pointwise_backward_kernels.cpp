// Gradients of the pointwise activations on the CPU: threshold_backward (relu's), and those of
// sigmoid, tanh and gelu.

#include <cmath>
#include <utility>

#include "common/elementwise.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {

using common::TensorIterator;
using cpu::cpu_kernel;

// grad where self > threshold, else 0.
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  TensorIterator iter = common::threshold_backward_meta(Tensor(), grad_output, self, threshold);
  OPD_DISPATCH_ALL_TYPES(iter.common_dtype(), "threshold_backward_cpu", [&] {
    const auto t = threshold.to<scalar_t>();
    cpu_kernel(iter,
               [t](scalar_t x, scalar_t grad) -> scalar_t { return x <= t ? scalar_t(0) : grad; });
  });
  return std::move(iter).output();
}

// d sigmoid / dx = y (1 - y), y the forward output.
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  TensorIterator iter = common::pointwise_backward_meta("sigmoid_backward", "sigmoid_backward_cpu",
                                                        Tensor(), grad_output, output);
  OPD_DISPATCH_FLOATING_TYPES(iter.common_dtype(), "sigmoid_backward_cpu", [&] {
    cpu_kernel(iter,
               [](scalar_t grad, scalar_t y) -> scalar_t { return grad * (scalar_t(1) - y) * y; });
  });
  return std::move(iter).output();
}

// d tanh / dx = 1 - y^2, y the forward output.
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  TensorIterator iter = common::pointwise_backward_meta("tanh_backward", "tanh_backward_cpu",
                                                        Tensor(), grad_output, output);
  OPD_DISPATCH_FLOATING_TYPES(iter.common_dtype(), "tanh_backward_cpu", [&] {
    cpu_kernel(iter,
               [](scalar_t grad, scalar_t y) -> scalar_t { return grad * (scalar_t(1) - y * y); });
  });
  return std::move(iter).output();
}

// d gelu / dx = Phi(x) + x phi(x) exactly; for the tanh form, the derivative of
// x (1 + tanh(u)) / 2 with u = sqrt(2 / pi) (x + 0.044715 x^3).
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  // The approximation is checked first, as the Meta kernel does.
  const bool tanh_form = common::gelu_approximation(approximate) == common::GeluApproximation::Tanh;
  TensorIterator iter = common::pointwise_backward_meta(
      "gelu_backward", "GeluBackwardKernelImpl", Tensor(), grad_output, self, common::kGeluTypes);
  // BFloat16 computes in float and rounds once (opmath_t), as PyTorch's.
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, iter.common_dtype(), "GeluBackwardKernelImpl", [&] {
    using T = common::opmath_t<scalar_t>;
    if (tanh_form) {
      cpu_kernel(iter, [](scalar_t grad_in, scalar_t x_in) -> scalar_t {
        const T grad = static_cast<T>(grad_in), x = static_cast<T>(x_in);
        const auto beta = static_cast<T>(M_SQRT2 * M_2_SQRTPI * 0.5);
        const auto kappa = static_cast<T>(0.044715);
        const T x_sq = x * x;
        const T t = std::tanh(beta * (x + kappa * x_sq * x));
        const T du_dx = beta * (T(1) + T(3) * kappa * x_sq);
        const T d = T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du_dx;
        return static_cast<scalar_t>(grad * d);
      });
    } else {
      cpu_kernel(iter, [](scalar_t grad_in, scalar_t x_in) -> scalar_t {
        const T grad = static_cast<T>(grad_in), x = static_cast<T>(x_in);
        const auto inv_sqrt_2pi = static_cast<T>(M_2_SQRTPI * M_SQRT1_2 * 0.5);
        const T cdf = T(0.5) * (T(1) + std::erf(x * static_cast<T>(M_SQRT1_2)));
        const T pdf = inv_sqrt_2pi * std::exp(T(-0.5) * x * x);
        return static_cast<scalar_t>(grad * (cdf + x * pdf));
      });
    }
  });
  return std::move(iter).output();
}

}  // namespace opd::native
