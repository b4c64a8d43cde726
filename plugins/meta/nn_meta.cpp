// Meta kernels of cat, softmax and nll_loss: the CPU kernels' checks, shapes and dtypes
// (common/nn_shape.h), and no data.

#include <tuple>

#include "common/nn_shape.h"
#include "common/output.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor cat(TensorList tensors, int64_t dim) {
  const common::CatMeta m = common::cat_meta(tensors, dim);
  return common::empty_output(m.sizes, m.dtype, tensors[0].device());
}

Tensor _softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  ScalarType dtype;
  common::softmax_meta("_softmax", self, dim, half_to_float, &dtype);
  return common::empty_output(self.sizes(), dtype, self.device());
}

Tensor _log_softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  ScalarType dtype;
  common::softmax_meta("_log_softmax", self, dim, half_to_float, &dtype);
  return common::empty_output(self.sizes(), dtype, self.device());
}

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                              ScalarType input_dtype) {
  ScalarType dtype;
  common::softmax_backward_meta("_softmax_backward_data", "softmax_backward", grad_output, output,
                                dim, input_dtype, &dtype);
  return common::empty_output(grad_output.sizes(), dtype, grad_output.device());
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  ScalarType input_dtype) {
  ScalarType dtype;
  common::softmax_backward_meta("_log_softmax_backward_data", "log_softmax_backward", grad_output,
                                output, dim, input_dtype, &dtype);
  return common::empty_output(grad_output.sizes(), dtype, grad_output.device());
}

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t) {
  const common::NllLossMeta m = common::nll_loss_forward_meta(self, target, weight, reduction);
  return {common::empty_output(m.output_sizes, self.scalar_type(), self.device()),
          common::empty_output({}, self.scalar_type(), self.device())};
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction, int64_t,
                         const Tensor& total_weight) {
  const common::NllLossMeta m =
      common::nll_loss_backward_meta(grad_output, self, target, weight, reduction, total_weight);
  return common::empty_output(m.output_sizes, self.scalar_type(), self.device());
}

}  // namespace opd::native
