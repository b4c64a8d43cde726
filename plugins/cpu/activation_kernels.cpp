// The activation functions on the CPU (Operators II): the impls of the structured groups silu,
// mish, hardsigmoid, hardswish, leaky_relu, elu, softplus, threshold and glu and of their
// backward groups (opd-gen writes the functional, in-place and out= kernels around them: Note
// [Structured kernels] in tools/gen/structured.h), and the plain kernels mish_backward,
// hardswish_backward, hardtanh_backward, log_sigmoid_forward and log_sigmoid_backward. The
// formulas are PyTorch 1.13's (aten/src/ATen/native/cpu/Activation.cpp); BFloat16 computes in
// float and rounds once, as PyTorch's opmath type. The loops are cpu_kernel's, split across the
// plugin's pool for large inputs.

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include "common/activation.h"
#include "cpu/elementwise_loops.h"
#include "cpu/unary_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cpu::cpu_kernel;

// out = f(x) over float, double and bfloat16 (in float); `f` is generic over float and double.
template <class F>
void unary_activation(const TensorIterator& iter, std::string_view name, const F& f) {
  cpu::floating_unary_kernel(iter, name, std::nullopt, f);
}

// out = f(a, b) over float, double and bfloat16 (in float).
template <class F>
void binary_activation(const TensorIterator& iter, std::string_view name, const F& f) {
  switch (iter.common_dtype()) {
    case ScalarType::Float32:
      return cpu_kernel(iter, [&f](float a, float b) -> float { return f(a, b); });
    case ScalarType::Float64:
      return cpu_kernel(iter, [&f](double a, double b) -> double { return f(a, b); });
    case ScalarType::BFloat16:
      return cpu_kernel(iter, [&f](BFloat16 a, BFloat16 b) -> BFloat16 {
        return BFloat16(f(static_cast<float>(a), static_cast<float>(b)));
      });
    default:
      common::throw_not_implemented_for(name, iter.common_dtype());
  }
}

template <class T>
T sigmoid_of(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// Note [Activations through the vectorised unary functions]
// silu, mish, softplus and elu spend their time in exp, log1p, tanh: on dense float and double
// runs they go through the SLEEF array functions of unary_vec.h (as PyTorch's Vectorized<T>),
// a block at a time: y = pre(x), then each of `ops` in turn on y, then out = post(x, y).
// Strided runs, bfloat16 and a CPU without the vector path take `scalar`.
constexpr int64_t kBlock = 256;

template <class T, class Pre, class Post, class Scalar1>
void vec_chain_kernel(const TensorIterator& iter, std::initializer_list<cpu::vec::VecOp> ops,
                      const Pre& pre, const Post& post, const Scalar1& scalar) {
  cpu::vec::ArrayFn<T> fns[4] = {};
  int nfns = 0;
  for (cpu::vec::VecOp op : ops) {
    fns[nfns] = cpu::vec::vec_unary<T>(op);
    if (fns[nfns++] == nullptr) return cpu_kernel(iter, [&scalar](T x) -> T { return scalar(x); });
  }
  if (iter.numel() == 0) return;
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        constexpr auto kSize = static_cast<int64_t>(sizeof(T));
        if (strides[0] != kSize || strides[1] != kSize) {
          for (int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<T*>(data[0] + i * strides[0]) =
                scalar(*reinterpret_cast<const T*>(data[1] + i * strides[1]));
          }
          return;
        }
        const T* in = reinterpret_cast<const T*>(data[1]);
        T* out = reinterpret_cast<T*>(data[0]);
        T a[kBlock], b[kBlock];
        for (int64_t start = 0; start < n; start += kBlock) {
          const int64_t m = std::min(kBlock, n - start);
          for (int64_t i = 0; i < m; ++i) a[i] = pre(in[start + i]);
          T* y = a;
          T* z = b;
          for (int k = 0; k < nfns; ++k) {
            fns[k](y, z, m);
            std::swap(y, z);
          }
          for (int64_t i = 0; i < m; ++i) out[start + i] = post(in[start + i], y[i]);
        }
      },
      &cpu::parallel_for);
  iter.cast_outputs();
}

// vec_chain_kernel over the iterator's dtype: float and double vectorised, bfloat16 in float.
template <class Pre, class Post, class F>
void vec_chain_activation(const TensorIterator& iter, std::string_view name,
                          std::initializer_list<cpu::vec::VecOp> ops, const Pre& pre,
                          const Post& post, const F& scalar) {
  switch (iter.common_dtype()) {
    case ScalarType::Float32:
      return vec_chain_kernel<float>(iter, ops, pre, post, scalar);
    case ScalarType::Float64:
      return vec_chain_kernel<double>(iter, ops, pre, post, scalar);
    default:
      return unary_activation(iter, name, scalar);
  }
}

}  // namespace

// silu(x) = x sigmoid(x); d/dx = s (1 + x (1 - s)).
void silu_out(const TensorIterator& iter, const Tensor&) {
  vec_chain_activation(
      iter, "silu_cpu", {cpu::vec::VecOp::Sigmoid}, [](auto x) { return x; },
      [](auto x, auto s) { return x * s; }, [](auto x) { return x * sigmoid_of(x); });
}
void silu_backward_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  binary_activation(iter, "silu_backward_cpu", [](auto grad, auto x) {
    using T = decltype(x);
    const T s = sigmoid_of(x);
    return grad * s * (T(1) + x * (T(1) - s));
  });
}

// mish(x) = x tanh(softplus(x)).
void mish_out(const TensorIterator& iter, const Tensor&) {
  using cpu::vec::VecOp;
  vec_chain_activation(
      iter, "mish_cpu", {VecOp::Exp, VecOp::Log1p, VecOp::Tanh}, [](auto x) { return x; },
      [](auto x, auto t) { return x * t; },
      [](auto x) { return x * std::tanh(std::log1p(std::exp(x))); });
}
Tensor mish_backward(const Tensor& grad_output, const Tensor& self) {
  TensorIterator iter = common::activation_backward_meta(
      "mish_backward", "mish_backward_cpu", Tensor(), grad_output, self, common::TypeSet::Floating);
  binary_activation(iter, "mish_backward_cpu", [](auto grad, auto x) {
    using T = decltype(x);
    const T t = std::tanh(std::log1p(std::exp(x)));
    return grad * (t + x * sigmoid_of(x) * (T(1) - t * t));
  });
  return std::move(iter).output();
}

// hardsigmoid(x) = clamp(x + 3, 0, 6) / 6; hardswish(x) = x hardsigmoid(x).
void hardsigmoid_out(const TensorIterator& iter, const Tensor&) {
  unary_activation(iter, "hardsigmoid_cpu", [](auto x) {
    using T = decltype(x);
    return std::min(std::max(x + T(3), T(0)), T(6)) / T(6);
  });
}
void hardsigmoid_backward_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  binary_activation(iter, "hardsigmoid_backward", [](auto grad, auto x) {
    using T = decltype(x);
    return (x > T(-3) && x < T(3)) ? grad / T(6) : T(0);
  });
}
void hardswish_out(const TensorIterator& iter, const Tensor&) {
  unary_activation(iter, "hardswish_cpu", [](auto x) {
    using T = decltype(x);
    return x * std::min(std::max(x + T(3), T(0)), T(6)) / T(6);
  });
}
Tensor hardswish_backward(const Tensor& grad_output, const Tensor& self) {
  TensorIterator iter = common::activation_backward_meta(
      "hardswish_backward", "hardswish_backward_cpu", Tensor(), grad_output, self);
  binary_activation(iter, "hardswish_backward_cpu", [](auto grad, auto x) {
    using T = decltype(x);
    if (x < T(-3)) return T(0);
    return x <= T(3) ? grad * (x / T(3) + T(0.5)) : grad;
  });
  return std::move(iter).output();
}

// hardtanh's gradient: grad strictly inside (min_val, max_val), else 0.
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, const Scalar& min_val,
                         const Scalar& max_val) {
  TensorIterator iter = common::hardtanh_backward_meta(Tensor(), grad_output, self);
  OPD_DISPATCH_FLOATING_TYPES(iter.common_dtype(), "hardshrink_backward_cpu", [&] {
    const auto lo = min_val.to<scalar_t>(), hi = max_val.to<scalar_t>();
    cpu_kernel(iter, [lo, hi](scalar_t grad, scalar_t x) -> scalar_t {
      return (x <= lo || x >= hi) ? scalar_t(0) : grad;
    });
  });
  return std::move(iter).output();
}

void leaky_relu_out(const TensorIterator& iter, const Tensor&, const Scalar& negative_slope) {
  const double slope = negative_slope.to<double>();
  // max and min do not branch, where the select does (and mispredicts on mixed signs); with a
  // negative slope the sum would make +0 of +0 * slope = -0, so that case selects.
  if (slope < 0.0) {
    unary_activation(iter, "leaky_relu_cpu", [slope](auto x) {
      using T = decltype(x);
      return x > T(0) ? x : x * static_cast<T>(slope);
    });
    return;
  }
  unary_activation(iter, "leaky_relu_cpu", [slope](auto x) {
    using T = decltype(x);
    return std::max(x, T(0)) + std::min(x, T(0)) * static_cast<T>(slope);
  });
}
void leaky_relu_backward_out(const TensorIterator& iter, const Tensor&, const Tensor&,
                             const Scalar& negative_slope, bool) {
  const double slope = negative_slope.to<double>();
  binary_activation(iter, "leaky_relu_backward_cpu", [slope](auto grad, auto x) {
    using T = decltype(x);
    return x > T(0) ? grad : grad * static_cast<T>(slope);
  });
}

// elu(x) = scale x for x > 0, else alpha scale (exp(input_scale x) - 1).
void elu_out(const TensorIterator& iter, const Tensor&, const Scalar& alpha, const Scalar& scale,
             const Scalar& input_scale) {
  const double neg = alpha.to<double>() * scale.to<double>(), pos = scale.to<double>(),
               in = input_scale.to<double>();
  // exp(x) - 1 rather than expm1, as PyTorch 1.13's vectorised loop: the same values near 0
  // (0 for -1e-30, and +0 for -0).
  const auto scalar = [neg, pos, in](auto x) {
    using T = decltype(x);
    return x <= T(0) ? (std::exp(x * static_cast<T>(in)) - T(1)) * static_cast<T>(neg)
                     : x * static_cast<T>(pos);
  };
  // The vector path's sum makes +0 where the select gives (exp(0) - 1) * neg = -0 for a negative
  // alpha * scale: that case selects.
  if (neg < 0.0) return unary_activation(iter, "elu_cpu", scalar);
  vec_chain_activation(
      iter, "elu_cpu", {cpu::vec::VecOp::Exp},
      [in](auto x) {
        using T = decltype(x);
        return std::min(x, T(0)) * static_cast<T>(in);
      },
      // e is exp(0) = 1 where x > 0: a sum instead of a select, which does not branch.
      [neg, pos](auto x, auto e) {
        using T = decltype(x);
        return std::max(x, T(0)) * static_cast<T>(pos) + (e - T(1)) * static_cast<T>(neg);
      },
      scalar);
}
// From the input, or from the output (is_result: elu_), where alpha scale exp(input_scale x) is
// the output plus alpha scale.
void elu_backward_out(const TensorIterator& iter, const Tensor&, const Scalar& alpha,
                      const Scalar& scale, const Scalar& input_scale, bool is_result,
                      const Tensor&) {
  const double neg = alpha.to<double>() * scale.to<double>(), pos = scale.to<double>(),
               in = input_scale.to<double>();
  binary_activation(iter, "elu_backward_cpu", [neg, pos, in, is_result](auto grad, auto x) {
    using T = decltype(x);
    if (x > T(0)) return grad * static_cast<T>(pos);
    if (is_result) return grad * static_cast<T>(in) * (x + static_cast<T>(neg));
    return grad * static_cast<T>(in) * static_cast<T>(neg) * std::exp(x * static_cast<T>(in));
  });
}

// softplus(x) = log(1 + exp(beta x)) / beta, and x where beta x > threshold.
void softplus_out(const TensorIterator& iter, const Tensor&, const Scalar& beta,
                  const Scalar& threshold) {
  const double b = beta.to<double>(), t = threshold.to<double>();
  using cpu::vec::VecOp;
  vec_chain_activation(
      iter, "softplus_cpu", {VecOp::Exp, VecOp::Log1p},
      [b, t](auto x) {
        using T = decltype(x);
        return std::min(x * static_cast<T>(b), static_cast<T>(t));
      },
      [b, t](auto x, auto l) {
        using T = decltype(x);
        return x * static_cast<T>(b) > static_cast<T>(t) ? x : l / static_cast<T>(b);
      },
      [b, t](auto x) {
        using T = decltype(x);
        const T bx = x * static_cast<T>(b);
        return bx > static_cast<T>(t) ? x : std::log1p(std::exp(bx)) / static_cast<T>(b);
      });
}
void softplus_backward_out(const TensorIterator& iter, const Tensor&, const Tensor&,
                           const Scalar& beta, const Scalar& threshold) {
  const double b = beta.to<double>(), t = threshold.to<double>();
  binary_activation(iter, "softplus_backward_cpu", [b, t](auto grad, auto x) {
    using T = decltype(x);
    const T bx = x * static_cast<T>(b);
    if (bx > static_cast<T>(t)) return grad;
    const T z = std::exp(bx);
    return grad * z / (z + T(1));
  });
}

// threshold(x) = value where x <= threshold, else x; the bounds in self's dtype, as PyTorch's.
void threshold_out(const TensorIterator& iter, const Tensor&, const Scalar& threshold,
                   const Scalar& value) {
  OPD_DISPATCH_ALL_TYPES_AND(kBFloat16, iter.common_dtype(), "threshold_cpu", [&] {
    using O = decltype(cpu::opmath(scalar_t{}));
    const O t = cpu::opmath(static_cast<scalar_t>(threshold.to<O>()));
    const auto v = static_cast<scalar_t>(value.to<O>());
    cpu_kernel(iter, [t, v](scalar_t x) -> scalar_t { return cpu::opmath(x) <= t ? v : x; });
  });
}

// glu(x) = a sigmoid(b), a and b the halves of x along dim (the iterator's inputs).
void glu_out(const TensorIterator& iter, const Tensor&, int64_t) {
  binary_activation(iter, "glu_cpu", [](auto a, auto b) { return a * sigmoid_of(b); });
}

// log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)); `buffer` keeps exp(-|x|) for the backward.
std::tuple<Tensor, Tensor> log_sigmoid_forward(const Tensor& self) {
  Tensor buffer = common::log_sigmoid_forward_output(self);
  Tensor output = common::log_sigmoid_forward_output(self);
  unary_activation(common::log_sigmoid_buffer_meta(buffer, self), "log_sigmoid_cpu",
                   [](auto x) { return std::exp(-std::abs(x)); });
  binary_activation(common::log_sigmoid_output_meta(output, self, buffer), "log_sigmoid_cpu",
                    [](auto x, auto z) {
                      using T = decltype(x);
                      return std::min(x, T(0)) - std::log1p(z);
                    });
  return {std::move(output), std::move(buffer)};
}
// d/dx log sigmoid(x) = 1 - sigmoid(x), from z = exp(-|x|): z / (1 + z) for x >= 0, and
// 1 - z / (1 + z) for x < 0.
Tensor log_sigmoid_backward(const Tensor& grad_output, const Tensor& self, const Tensor& buffer) {
  TensorIterator iter = common::log_sigmoid_backward_meta(Tensor(), grad_output, self, buffer);
  const auto f = [](auto x, auto z, auto grad) {
    using T = decltype(x);
    const T q = z / (T(1) + z);
    return (x < T(0) ? T(1) - q : q) * grad;
  };
  switch (iter.common_dtype()) {
    case ScalarType::Float32:
      cpu_kernel(iter, [f](float x, float z, float g) -> float { return f(x, z, g); });
      break;
    case ScalarType::Float64:
      cpu_kernel(iter, [f](double x, double z, double g) -> double { return f(x, z, g); });
      break;
    default:
      cpu_kernel(iter, [f](BFloat16 x, BFloat16 z, BFloat16 g) -> BFloat16 {
        return BFloat16(f(static_cast<float>(x), static_cast<float>(z), static_cast<float>(g)));
      });
  }
  return std::move(iter).output();
}

}  // namespace opd::native
