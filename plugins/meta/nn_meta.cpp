// Meta kernels of cat and nll_loss: the CPU kernels' checks, shapes and dtypes
// (common/nn_shape.h), and no data. Softmax's are opd-gen's, from its meta functions.

#include <tuple>

#include "common/nn_shape.h"
#include "common/output.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor cat(TensorList tensors, int64_t dim) {
  const common::CatMeta m = common::cat_meta(tensors, dim);
  return common::empty_output(m.sizes, m.dtype, tensors[0].device());
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

// The checks only: the rows it scales are data.
Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double, double) {
  common::embedding_renorm_check(self, indices);
  return self;
}

}  // namespace opd::native
