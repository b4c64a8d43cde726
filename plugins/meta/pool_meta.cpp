// Meta kernels of the 2-D pooling operators: the CPU kernels' checks, shapes and layouts
// (common/pool_shape.h, Note [Pooling layouts]), and no data.

#include <optional>
#include <tuple>

#include "common/pool_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  const common::Pool2dShape s =
      common::max_pool2d_shape(self, kernel_size, stride, padding, dilation, ceil_mode);
  return {common::pool_output(s.out_sizes, self.scalar_type(), self.device(), s.channels_last),
          common::pool_output(s.out_sizes, kLong, self.device(), s.channels_last)};
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self,
                                        IntArrayRef kernel_size, IntArrayRef stride,
                                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  const common::Pool2dShape s =
      common::max_pool2d_shape(self, kernel_size, stride, padding, dilation, ceil_mode);
  common::check_pool2d_backward(s, self, grad_output, &indices);
  return common::pool_output(self.sizes(), self.scalar_type(), self.device(), s.channels_last);
}

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool,
                  std::optional<int64_t> divisor_override) {
  const common::Pool2dShape s =
      common::avg_pool2d_shape(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  return common::pool_output(s.out_sizes, self.scalar_type(), self.device(), s.channels_last);
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                           IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool,
                           std::optional<int64_t> divisor_override) {
  const common::Pool2dShape s =
      common::avg_pool2d_shape(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  common::check_pool2d_backward(s, self, grad_output, nullptr);
  return common::pool_output(self.sizes(), self.scalar_type(), self.device(), s.channels_last);
}

Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  const common::Pool2dShape s = common::adaptive_avg_pool2d_shape(self, output_size);
  return common::pool_output(s.out_sizes, self.scalar_type(), self.device(), s.channels_last);
}

Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  const common::Pool2dShape s = common::adaptive_avg_pool2d_backward_shape(grad_output, self);
  return common::pool_output(self.sizes(), self.scalar_type(), self.device(), s.channels_last);
}

}  // namespace opd::native
