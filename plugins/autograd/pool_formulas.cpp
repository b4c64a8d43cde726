#include "autograd/pool_formulas.h"

#include <vector>

#include "opd/error.h"

namespace opd::autograd {

Tensor max_pool_double_backward(const Tensor& grad, const Tensor& indices, int64_t dim) {
  OPD_INTERNAL_ASSERT(indices.dim() >= dim);
  // Both flattened to [..., plane]: gather reads each plane at its indices.
  std::vector<int64_t> lead(indices.sizes().begin(), indices.sizes().end() - dim);
  std::vector<int64_t> g_shape = lead, i_shape = lead;
  g_shape.push_back(-1);
  i_shape.push_back(-1);
  return grad.contiguous().reshape(g_shape).gather(-1, indices.reshape(i_shape)).reshape(indices.sizes());
}

Tensor adaptive_avg_pool2d_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes) {
  const std::vector<int64_t> size(grad_output_sizes.end() - 2, grad_output_sizes.end());
  return opd::_adaptive_avg_pool2d(grad, size);
}

}  // namespace opd::autograd
