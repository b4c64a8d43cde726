// The activation functions' metadata steps (activation.h) and the meta functions of their
// structured groups (opd/native/meta_functions.h): PyTorch 1.13's build_unary_op (self's dtype)
// and build_borrowing_binary_op (grad_output and self promoted) over the CPU kernels' dtypes.

#include <utility>

#include "common/activation.h"
#include "common/elementwise.h"
#include "opd/error.h"
#include "opd/native/meta_functions.h"
#include "opd/ops.h"

namespace opd {

namespace common {

TensorIterator activation_meta(std::string_view name, std::string_view kernel, const Tensor& out,
                               const Tensor& self, TypeSet types) {
  TensorIterator iter = TensorIterator::unary_op(name, out, self);
  check_dtype_in(kernel, iter.common_dtype(), types);
  return iter;
}

TensorIterator activation_backward_meta(std::string_view name, std::string_view kernel,
                                        const Tensor& out, const Tensor& grad_output,
                                        const Tensor& self, TypeSet types) {
  TensorIterator iter = TensorIterator::binary_op(name, out, grad_output, self);
  check_dtype_in(kernel, iter.common_dtype(), types);
  return iter;
}

TensorIterator hardtanh_backward_meta(const Tensor& out, const Tensor& grad_output,
                                      const Tensor& self) {
  return activation_backward_meta("hardtanh_backward", "hardshrink_backward_cpu", out, grad_output,
                                  self, TypeSet::Floating);
}

Tensor log_sigmoid_forward_output(const Tensor& self) {
  check_dtype_in("log_sigmoid_cpu", self.scalar_type(), kActivationTypes);
  return opd::empty_like(self, {}, MemoryFormat::Contiguous);
}

TensorIterator log_sigmoid_buffer_meta(const Tensor& buffer, const Tensor& self) {
  return activation_meta("log_sigmoid_forward", "log_sigmoid_cpu", buffer, self);
}

TensorIterator log_sigmoid_output_meta(const Tensor& output, const Tensor& self,
                                       const Tensor& buffer) {
  return TensorIteratorConfig("log_sigmoid_forward")
      .add_output(output)
      .add_input(self)
      .add_input(buffer)
      .build();
}

TensorIterator log_sigmoid_backward_meta(const Tensor& out, const Tensor& grad_output,
                                         const Tensor& self, const Tensor& buffer) {
  TensorIterator iter = TensorIteratorConfig("log_sigmoid_backward")
                            .add_output(out)
                            .add_input(self)
                            .add_input(buffer)
                            .add_input(grad_output)
                            .promote_inputs_to_common_dtype(true)
                            .build();
  check_dtype_in("log_sigmoid_backward_cpu", iter.common_dtype(), kActivationTypes);
  return iter;
}

GluHalves glu_halves(const Tensor& self, int64_t dim) {
  OPD_CHECK(self.dim() > 0, "glu does not support 0-dimensional tensors");
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  OPD_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension {} is size {}", d, n);
  return {opd::narrow(self, d, 0, n / 2), opd::narrow(self, d, n / 2, n / 2), d};
}

void check_leaky_relu_backward(const Scalar& negative_slope, bool self_is_result) {
  OPD_CHECK(!self_is_result || negative_slope.to<double>() >= 0.0,
            "In-place leakyReLu backward calculation is triggered with a negative slope which "
            "is not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope");
}

void check_elu_backward(const Scalar& alpha, bool is_result) {
  OPD_CHECK(!is_result || alpha.to<double>() >= 0.0,
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead.");
}

}  // namespace common

using common::activation_backward_meta;
using common::activation_meta;
using common::TensorIterator;

TensorIterator meta::silu(const Tensor& out, const Tensor& self) {
  return activation_meta("silu", "silu_cpu", out, self);
}
TensorIterator meta::silu_backward_grad_input(const Tensor& grad_input, const Tensor& grad_output,
                                              const Tensor& self) {
  return activation_backward_meta("silu_backward", "silu_backward_cpu", grad_input, grad_output,
                                  self);
}

TensorIterator meta::mish(const Tensor& out, const Tensor& self) {
  return activation_meta("mish", "mish_cpu", out, self, common::TypeSet::Floating);
}

TensorIterator meta::hardsigmoid(const Tensor& out, const Tensor& self) {
  return activation_meta("hardsigmoid", "hardsigmoid_cpu", out, self);
}
TensorIterator meta::hardsigmoid_backward_grad_input(const Tensor& grad_input,
                                                     const Tensor& grad_output,
                                                     const Tensor& self) {
  return activation_backward_meta("hardsigmoid_backward", "hardsigmoid_backward", grad_input,
                                  grad_output, self);
}

TensorIterator meta::hardswish(const Tensor& out, const Tensor& self) {
  return activation_meta("hardswish", "hardswish_cpu", out, self);
}

TensorIterator meta::leaky_relu(const Tensor& out, const Tensor& self,
                                const Scalar& negative_slope) {
  TensorIterator iter = activation_meta("leaky_relu", "leaky_relu_cpu", out, self);
  common::check_scalar_fits(negative_slope, iter.common_dtype());
  return iter;
}
TensorIterator meta::leaky_relu_backward_grad_input(const Tensor& grad_input,
                                                    const Tensor& grad_output, const Tensor& self,
                                                    const Scalar& negative_slope,
                                                    bool self_is_result) {
  common::check_leaky_relu_backward(negative_slope, self_is_result);
  return activation_backward_meta("leaky_relu_backward", "leaky_relu_backward_cpu", grad_input,
                                  grad_output, self);
}

TensorIterator meta::elu(const Tensor& out, const Tensor& self, const Scalar& alpha,
                         const Scalar& scale, const Scalar& input_scale) {
  TensorIterator iter = activation_meta("elu", "elu_cpu", out, self);
  for (const Scalar* s : {&alpha, &scale, &input_scale}) {
    common::check_scalar_fits(*s, iter.common_dtype());
  }
  return iter;
}
TensorIterator meta::elu_backward_grad_input(const Tensor& grad_input, const Tensor& grad_output,
                                             const Scalar& alpha, const Scalar&, const Scalar&,
                                             bool is_result, const Tensor& self_or_result) {
  common::check_elu_backward(alpha, is_result);
  return activation_backward_meta("elu_backward", "elu_backward_cpu", grad_input, grad_output,
                                  self_or_result);
}

TensorIterator meta::softplus(const Tensor& out, const Tensor& self, const Scalar& beta,
                              const Scalar& threshold) {
  TensorIterator iter = activation_meta("softplus", "softplus_cpu", out, self);
  common::check_scalar_fits(beta, iter.common_dtype());
  common::check_scalar_fits(threshold, iter.common_dtype());
  return iter;
}
TensorIterator meta::softplus_backward_grad_input(const Tensor& grad_input,
                                                  const Tensor& grad_output, const Tensor& self,
                                                  const Scalar&, const Scalar&) {
  return activation_backward_meta("softplus_backward", "softplus_backward_cpu", grad_input,
                                  grad_output, self);
}

// threshold: every real dtype but Half and Bool, as PyTorch 1.13's "threshold_cpu".
TensorIterator meta::threshold(const Tensor& out, const Tensor& self, const Scalar&,
                               const Scalar&) {
  return activation_meta("threshold", "threshold_cpu", out, self,
                         common::TypeSet::All.with(kBFloat16));
}

TensorIterator meta::glu(const Tensor& out, const Tensor& self, int64_t dim) {
  common::GluHalves h = common::glu_halves(self, dim);
  // The halves are views made here: the iterator keeps them alive.
  TensorIterator iter = common::TensorIteratorConfig("glu")
                            .add_output(out)
                            .add_owned_input(std::move(h.first))
                            .add_owned_input(std::move(h.second))
                            .promote_inputs_to_common_dtype(true)
                            .cast_common_dtype_to_outputs(true)
                            .enforce_safe_casting_to_output(true)
                            .build();
  common::check_dtype_in("glu_cpu", iter.common_dtype(), common::kActivationTypes);
  return iter;
}

}  // namespace opd
