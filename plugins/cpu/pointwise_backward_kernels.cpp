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
  TensorIterator iter = common::pointwise_backward_meta("gelu_backward", "GeluBackwardKernelImpl",
                                                        Tensor(), grad_output, self);
  OPD_DISPATCH_FLOATING_TYPES(iter.common_dtype(), "GeluBackwardKernelImpl", [&] {
    if (tanh_form) {
      cpu_kernel(iter, [](scalar_t grad, scalar_t x) -> scalar_t {
        const auto beta = static_cast<scalar_t>(M_SQRT2 * M_2_SQRTPI * 0.5);
        const auto kappa = static_cast<scalar_t>(0.044715);
        const scalar_t x_sq = x * x;
        const scalar_t t = std::tanh(beta * (x + kappa * x_sq * x));
        const scalar_t du_dx = beta * (scalar_t(1) + scalar_t(3) * kappa * x_sq);
        const scalar_t d =
            scalar_t(0.5) * (scalar_t(1) + t) + scalar_t(0.5) * x * (scalar_t(1) - t * t) * du_dx;
        return grad * d;
      });
    } else {
      cpu_kernel(iter, [](scalar_t grad, scalar_t x) -> scalar_t {
        const auto inv_sqrt_2pi = static_cast<scalar_t>(M_2_SQRTPI * M_SQRT1_2 * 0.5);
        const scalar_t cdf =
            scalar_t(0.5) * (scalar_t(1) + std::erf(x * static_cast<scalar_t>(M_SQRT1_2)));
        const scalar_t pdf = inv_sqrt_2pi * std::exp(scalar_t(-0.5) * x * x);
        return grad * (cdf + x * pdf);
      });
    }
  });
  return std::move(iter).output();
}

}  // namespace opd::native
