// Binary arithmetic, comparisons and where on CUDA devices: the shared metadata step of
// common/elementwise.h, then one launch of the elementwise family (kernels/elementwise.cu).

#include <utility>

#include "common/elementwise.h"
#include "cuda/geometry.h"
#include "opd/native/CUDA.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cuda::kernel_dtype;
using cuda::run_elementwise;
using cuda::kern::BinaryOp;
using cuda::kern::CompareOp;

void binary_kernel(const TensorIterator& iter, BinaryOp op, std::string_view name,
                   cuda::kern::ScalarArg a = {}) {
  const auto dtype = kernel_dtype(iter.common_dtype(), name);
  run_elementwise(iter, name, [&](const cuda::kern::Geometry& g, cuda::kern::Stream s) {
    return cuda::kern::launch_binary(op, dtype, g, a, s);
  });
}

// add and sub (sub adds -alpha).
void add_kernel(const TensorIterator& iter, const Scalar& alpha, std::string_view name) {
  binary_kernel(iter, BinaryOp::Add, name, cuda::scalar_arg(alpha));
}

Tensor compare(const char* op, CompareOp cmp, const Tensor& self, const Tensor& other) {
  TensorIterator iter = common::comparison_meta(op, Tensor(), self, other);
  const std::string name = std::string(op) + "_cuda";
  const auto dtype = kernel_dtype(iter.common_dtype(), name);
  run_elementwise(iter, name, [&](const cuda::kern::Geometry& g, cuda::kern::Stream s) {
    return cuda::kern::launch_compare(cmp, dtype, g, s);
  });
  return std::move(iter).output();
}

}  // namespace

// The structured impls (Note [Structured kernels] in tools/gen/structured.h): opd-gen writes
// the out=, in-place and functional kernels around them.
void add_out(const TensorIterator& iter, const Tensor&, const Tensor&, const Scalar& alpha) {
  add_kernel(iter, alpha, "add_cuda");
}
void sub_out(const TensorIterator& iter, const Tensor&, const Tensor&, const Scalar& alpha) {
  add_kernel(iter, common::negated(alpha), "sub_cuda");
}
void mul_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  binary_kernel(iter, BinaryOp::Mul, "mul_cuda");
}
void div_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  binary_kernel(iter, BinaryOp::Div, "div_true_cuda");
}

Tensor pow_Tensor_Tensor(const Tensor& self, const Tensor& exponent) {
  TensorIterator iter = common::pow_meta(Tensor(), self, exponent);
  binary_kernel(iter, BinaryOp::Pow, "pow_cuda");
  return std::move(iter).output();
}

Tensor maximum(const Tensor& self, const Tensor& other) {
  TensorIterator iter = common::min_max_meta("maximum", Tensor(), self, other);
  binary_kernel(iter, BinaryOp::Maximum, "maximum_cuda");
  return std::move(iter).output();
}
Tensor minimum(const Tensor& self, const Tensor& other) {
  TensorIterator iter = common::min_max_meta("minimum", Tensor(), self, other);
  binary_kernel(iter, BinaryOp::Minimum, "minimum_cuda");
  return std::move(iter).output();
}

Tensor eq_Tensor(const Tensor& self, const Tensor& other) {
  return compare("eq", CompareOp::Eq, self, other);
}
Tensor ne_Tensor(const Tensor& self, const Tensor& other) {
  return compare("ne", CompareOp::Ne, self, other);
}
Tensor lt_Tensor(const Tensor& self, const Tensor& other) {
  return compare("lt", CompareOp::Lt, self, other);
}
Tensor le_Tensor(const Tensor& self, const Tensor& other) {
  return compare("le", CompareOp::Le, self, other);
}
Tensor gt_Tensor(const Tensor& self, const Tensor& other) {
  return compare("gt", CompareOp::Gt, self, other);
}
Tensor ge_Tensor(const Tensor& self, const Tensor& other) {
  return compare("ge", CompareOp::Ge, self, other);
}

Tensor where_self(const Tensor& condition, const Tensor& self, const Tensor& other) {
  TensorIterator iter = common::where_meta(Tensor(), condition, self, other);
  const auto dtype = kernel_dtype(iter.dtype(), "where_cuda");
  run_elementwise(iter, "where_cuda", [&](const cuda::kern::Geometry& g, cuda::kern::Stream s) {
    return cuda::kern::launch_where(dtype, g, s);
  });
  return std::move(iter).output();
}

// Gradients of the pointwise activations.
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  TensorIterator iter = common::threshold_backward_meta(Tensor(), grad_output, self, threshold);
  binary_kernel(iter, BinaryOp::ThresholdBackward, "threshold_backward_cuda",
                cuda::scalar_arg(threshold));
  return std::move(iter).output();
}
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  TensorIterator iter = common::pointwise_backward_meta("sigmoid_backward", "sigmoid_backward_cuda",
                                                        Tensor(), grad_output, output);
  binary_kernel(iter, BinaryOp::SigmoidBackward, "sigmoid_backward_cuda");
  return std::move(iter).output();
}
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  TensorIterator iter = common::pointwise_backward_meta("tanh_backward", "tanh_backward_cuda",
                                                        Tensor(), grad_output, output);
  binary_kernel(iter, BinaryOp::TanhBackward, "tanh_backward_cuda");
  return std::move(iter).output();
}
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  const bool tanh_form = common::gelu_approximation(approximate) == common::GeluApproximation::Tanh;
  TensorIterator iter = common::pointwise_backward_meta("gelu_backward", "GeluBackwardKernelImpl",
                                                        Tensor(), grad_output, self);
  binary_kernel(iter, tanh_form ? BinaryOp::GeluTanhBackward : BinaryOp::GeluBackward,
                "GeluBackwardKernelImpl");
  return std::move(iter).output();
}

}  // namespace opd::native
