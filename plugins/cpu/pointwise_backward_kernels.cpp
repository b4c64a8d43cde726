// Gradients of the pointwise activations on the CPU: threshold_backward (relu's), and those of
// sigmoid, tanh and gelu.

#include <cmath>
#include <type_traits>
#include <utility>

#include "common/elementwise.h"
#include "cpu/elementwise_loops.h"
#include "cpu/unary_vec_gelu.h"
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

// cpu_kernel for gelu_backward's float and double: runs whose output and inputs are dense go
// to the array loop `vec`, the others to `op`.
template <class T, class Op>
void gelu_backward_dense(const TensorIterator& iter, const Op& op,
                         cpu::vec::GeluBackwardArrayFn<T> vec) {
  if (iter.numel() == 0) return;
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        constexpr auto kSize = static_cast<int64_t>(sizeof(T));
        if (strides[0] == kSize && strides[1] == kSize && strides[2] == kSize) {
          vec(reinterpret_cast<const T*>(data[1]), reinterpret_cast<const T*>(data[2]),
              reinterpret_cast<T*>(data[0]), n);
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<T*>(data[0] + i * strides[0]) =
              op(*reinterpret_cast<const T*>(data[1] + i * strides[1]),
                 *reinterpret_cast<const T*>(data[2] + i * strides[2]));
        }
      },
      &cpu::parallel_for);
  iter.cast_outputs();
}

// d gelu / dx = Phi(x) + x phi(x) exactly; for the tanh form, the derivative of
// x (1 + tanh(u)) / 2 with u = sqrt(2 / pi) (x + 0.044715 x^3).
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  // The approximation is checked first, as the Meta kernel does.
  const bool tanh_form = common::gelu_approximation(approximate) == common::GeluApproximation::Tanh;
  TensorIterator iter = common::pointwise_backward_meta(
      "gelu_backward", "GeluBackwardKernelImpl", Tensor(), grad_output, self, common::kGeluTypes);
  // BFloat16 computes in float and rounds once (opmath_t), as PyTorch's. Float and double runs
  // with both inputs and the output dense go to the AVX2 loops (cpu/unary_vec_gelu.h), the
  // others to the scalar formulas below.
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, iter.common_dtype(), "GeluBackwardKernelImpl", [&] {
    using T = common::opmath_t<scalar_t>;
    const auto run = [&](const auto& op) {
      if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
        if (const auto vec = cpu::vec::gelu_backward_vec<scalar_t>(tanh_form)) {
          return gelu_backward_dense(iter, op, vec);
        }
      }
      cpu_kernel(iter, op);
    };
    if (tanh_form) {
      run([](scalar_t grad_in, scalar_t x_in) -> scalar_t {
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
      run([](scalar_t grad_in, scalar_t x_in) -> scalar_t {
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
