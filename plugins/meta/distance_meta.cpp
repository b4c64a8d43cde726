// Meta kernels of _cdist_forward, _cdist_backward, _pdist_forward and _pdist_backward: the CPU
// kernels' checks and result shapes (common/distance_shape.h), and no data.

#include <vector>

#include "common/distance_shape.h"
#include "common/output.h"
#include "opd/native/Meta.h"
#include "opd/ops.h"

namespace opd::native {

Tensor _cdist_forward(const Tensor& x1, const Tensor& x2, double p,
                      std::optional<int64_t> compute_mode) {
  const common::CdistGeometry g = common::cdist_geometry(x1, x2, p, compute_mode);
  return common::empty_output(g.output_sizes, x1.scalar_type(), x1.device());
}

Tensor _cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                       const Tensor& cdist) {
  const common::CdistGeometry g = common::cdist_geometry(x1, x2, p, std::nullopt);
  if (g.r1 == 0 || g.r2 == 0 || g.c == 0 || g.batch == 0) {
    return opd::empty_like(x1);  // CPU's zeros_like(x1), as PyTorch's: x1's layout kept
  }
  common::cdist_backward_check(grad, x1, cdist, g);
  return common::empty_output(g.x1_sizes, x1.scalar_type(), x1.device());
}

Tensor _pdist_forward(const Tensor& self, double /*p*/) {
  return common::empty_output(common::pdist_sizes(self), self.scalar_type(), self.device());
}

Tensor _pdist_backward(const Tensor& grad, const Tensor& self, double /*p*/, const Tensor& pdist) {
  common::pdist_backward_check(grad, self, pdist);
  return common::empty_output(self.sizes(), self.scalar_type(), self.device());
}

}  // namespace opd::native
