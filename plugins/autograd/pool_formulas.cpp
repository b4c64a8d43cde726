#include "autograd/pool_formulas.h"

#include <vector>

#include "opd/error.h"

namespace opd::autograd {

Tensor max_pool_double_backward(const Tensor& grad, const Tensor& indices, int64_t dim) {
  OPD_INTERNAL_ASSERT(indices.dim() >= dim && grad.dim() == indices.dim());
  // Both flattened to [..., plane]: gather reads each plane at its indices. The plane sizes are
  // spelled out (not -1), so that empty batches reshape too.
  std::vector<int64_t> g_shape(indices.sizes().begin(), indices.sizes().end() - dim);
  std::vector<int64_t> i_shape = g_shape;
  int64_t g_plane = 1, i_plane = 1;
  for (int64_t d = indices.dim() - dim; d < indices.dim(); ++d) {
    g_plane *= grad.size(d);
    i_plane *= indices.size(d);
  }
  g_shape.push_back(g_plane);
  i_shape.push_back(i_plane);
  return grad.contiguous()
      .reshape(g_shape)
      .gather(-1, indices.reshape(i_shape))
      .reshape(indices.sizes());
}

Tensor adaptive_avg_pool2d_double_backward(const Tensor& grad, IntArrayRef grad_output_sizes) {
  const std::vector<int64_t> size(grad_output_sizes.end() - 2, grad_output_sizes.end());
  return opd::_adaptive_avg_pool2d(grad, size);
}

}  // namespace opd::autograd
