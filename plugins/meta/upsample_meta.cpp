// Meta kernels of upsample_nearest2d and upsample_bilinear2d and their backward operators: the
// CPU kernels' checks, shapes and layouts (common/upsample_shape.h), and no data.

#include <optional>
#include <vector>

#include "common/pool_shape.h"
#include "common/upsample_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double>,
                          std::optional<double>) {
  const std::vector<int64_t> sizes =
      common::upsample_2d_meta(self, output_size, "compute_indices_weights_nearest", true);
  return common::pool_output(sizes, self.scalar_type(), self.device(),
                             common::is_channels_last_2d(self));
}

Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size,
                                   IntArrayRef input_size, std::optional<double>,
                                   std::optional<double>) {
  common::upsample_2d_backward_meta(grad_output, output_size, input_size,
                                    "upsample_nearest2d_backward");
  return common::pool_output(input_size, grad_output.scalar_type(), grad_output.device(),
                             common::is_channels_last_2d(grad_output));
}

Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool, std::optional<double>,
                           std::optional<double>) {
  const std::vector<int64_t> sizes =
      common::upsample_2d_meta(self, output_size, "compute_indices_weights_linear", false);
  return common::pool_output(sizes, self.scalar_type(), self.device(),
                             common::is_channels_last_2d(self));
}

Tensor upsample_bilinear2d_backward(const Tensor& grad_output, IntArrayRef output_size,
                                    IntArrayRef input_size, bool, std::optional<double>,
                                    std::optional<double>) {
  common::upsample_2d_backward_meta(grad_output, output_size, input_size,
                                    "upsample_bilinear2d_backward");
  return common::pool_output(input_size, grad_output.scalar_type(), grad_output.device(),
                             common::is_channels_last_2d(grad_output));
}

}  // namespace opd::native
