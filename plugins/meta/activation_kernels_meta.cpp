// Meta kernels of the activation functions that are not structured (the structured groups' come
// from their meta functions, plugins/common/activation_meta.cpp): the CPU kernels' metadata
// steps, without the loops.

#include <tuple>

#include "common/activation.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor mish_backward(const Tensor& grad_output, const Tensor& self) {
  return common::activation_backward_meta("mish_backward", "mish_backward_cpu", Tensor(),
                                          grad_output, self, common::TypeSet::Floating)
      .output();
}

Tensor hardswish_backward(const Tensor& grad_output, const Tensor& self) {
  return common::activation_backward_meta("hardswish_backward", "hardswish_backward_cpu", Tensor(),
                                          grad_output, self)
      .output();
}

Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, const Scalar&,
                         const Scalar&) {
  return common::hardtanh_backward_meta(Tensor(), grad_output, self).output();
}

std::tuple<Tensor, Tensor> log_sigmoid_forward(const Tensor& self) {
  Tensor buffer = common::log_sigmoid_forward_output(self);
  Tensor output = common::log_sigmoid_forward_output(self);
  common::log_sigmoid_buffer_meta(buffer, self);
  common::log_sigmoid_output_meta(output, self, buffer);
  return {std::move(output), std::move(buffer)};
}

Tensor log_sigmoid_backward(const Tensor& grad_output, const Tensor& self, const Tensor& buffer) {
  return common::log_sigmoid_backward_meta(Tensor(), grad_output, self, buffer).output();
}

}  // namespace opd::native
