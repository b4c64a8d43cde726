// Unary functions on CUDA devices: neg, abs, the floating functions, relu, gelu, clamp, and pow
// with a Scalar exponent; the shared metadata step, then one launch of the elementwise family.

#include <utility>

#include "common/elementwise.h"
#include "cuda/geometry.h"
#include "opd/native/CUDA.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cuda::kern::ScalarArg;
using cuda::kern::UnaryOp;

void unary_kernel(const TensorIterator& iter, UnaryOp op, std::string_view name, ScalarArg a = {},
                  ScalarArg b = {}) {
  const auto dtype = cuda::kernel_dtype(iter.common_dtype(), name);
  cuda::run_elementwise(iter, name, [&](const cuda::kern::Geometry& g, cuda::kern::Stream s) {
    return cuda::kern::launch_unary(op, dtype, g, a, b, s);
  });
}

Tensor unary_float(const char* op, UnaryOp kernel_op, const Tensor& self) {
  TensorIterator iter = common::unary_float_meta(op, Tensor(), self);
  unary_kernel(iter, kernel_op, std::string(op) + "_cuda");
  return std::move(iter).output();
}

}  // namespace

Tensor neg(const Tensor& self) {
  TensorIterator iter = common::neg_meta(Tensor(), self);
  unary_kernel(iter, UnaryOp::Neg, "neg_cuda");
  return std::move(iter).output();
}

Tensor abs(const Tensor& self) {
  TensorIterator iter = common::abs_meta(Tensor(), self);
  unary_kernel(iter, UnaryOp::Abs, "abs_cuda");
  return std::move(iter).output();
}

Tensor exp(const Tensor& self) { return unary_float("exp", UnaryOp::Exp, self); }
Tensor log(const Tensor& self) { return unary_float("log", UnaryOp::Log, self); }
Tensor sqrt(const Tensor& self) { return unary_float("sqrt", UnaryOp::Sqrt, self); }
Tensor rsqrt(const Tensor& self) { return unary_float("rsqrt", UnaryOp::Rsqrt, self); }
Tensor sin(const Tensor& self) { return unary_float("sin", UnaryOp::Sin, self); }
Tensor cos(const Tensor& self) { return unary_float("cos", UnaryOp::Cos, self); }
Tensor tanh(const Tensor& self) { return unary_float("tanh", UnaryOp::Tanh, self); }
Tensor sigmoid(const Tensor& self) { return unary_float("sigmoid", UnaryOp::Sigmoid, self); }

Tensor relu(const Tensor& self) {
  TensorIterator iter = common::relu_meta(Tensor(), self);
  unary_kernel(iter, UnaryOp::Relu, "relu_cuda");
  return std::move(iter).output();
}

Tensor& relu_(Tensor& self) {
  TensorIterator iter = common::relu_meta(self, self);
  unary_kernel(iter, UnaryOp::Relu, "relu_cuda");
  self.bump_version();
  return self;
}

Tensor gelu(const Tensor& self, std::string_view approximate) {
  TensorIterator iter = common::gelu_meta(Tensor(), self, approximate);
  const bool tanh_form = common::gelu_approximation(approximate) == common::GeluApproximation::Tanh;
  unary_kernel(iter, tanh_form ? UnaryOp::GeluTanh : UnaryOp::Gelu, "GeluKernelImpl");
  return std::move(iter).output();
}

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max) {
  TensorIterator iter = common::clamp_meta(Tensor(), self, min, max);
  unary_kernel(iter, UnaryOp::Clamp, "clamp_scalar_cuda", cuda::scalar_arg(min),
               cuda::scalar_arg(max));
  return std::move(iter).output();
}

// x^0 is 1 and x^1 is x for every dtype; other exponents as the CPU's pow (the common ones as
// cheaper, as exact or more exact, operations).
Tensor pow_Tensor_Scalar(const Tensor& self, const Scalar& exponent) {
  TensorIterator iter = common::pow_meta(Tensor(), self, exponent);
  if (common::pow_is_trivial(exponent)) {
    unary_kernel(iter, exponent.to_double() == 1 ? UnaryOp::Identity : UnaryOp::One, "pow_cuda");
  } else {
    unary_kernel(iter, UnaryOp::PowScalar, "pow_cuda", cuda::scalar_arg(exponent));
  }
  return std::move(iter).output();
}

}  // namespace opd::native
