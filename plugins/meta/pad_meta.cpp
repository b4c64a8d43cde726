// Meta kernels of reflection_pad{1,2}d and replication_pad{1,2}d and their backward operators:
// the CPU kernels' checks and shapes (common/pad_shape.h), and no data.

#include "common/output.h"
#include "common/pad_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

namespace {

using common::PadMode;

Tensor pad_meta(PadMode mode, int dims, const Tensor& self, IntArrayRef padding) {
  const common::PadShape s = common::pad_shape(mode, dims, self, padding);
  return common::empty_output(s.out_sizes, self.scalar_type(), self.device());
}

Tensor pad_backward_meta(PadMode mode, int dims, const Tensor& grad_output, const Tensor& self,
                         IntArrayRef padding) {
  common::pad_backward_shape(mode, dims, grad_output, self, padding);
  return common::empty_output(self.sizes(), self.scalar_type(), self.device());
}

}  // namespace

Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_meta(PadMode::Reflect, 1, self, padding);
}
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_meta(PadMode::Reflect, 2, self, padding);
}
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_meta(PadMode::Replicate, 1, self, padding);
}
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_meta(PadMode::Replicate, 2, self, padding);
}

Tensor reflection_pad1d_backward(const Tensor& grad_output, const Tensor& self,
                                 IntArrayRef padding) {
  return pad_backward_meta(PadMode::Reflect, 1, grad_output, self, padding);
}
Tensor reflection_pad2d_backward(const Tensor& grad_output, const Tensor& self,
                                 IntArrayRef padding) {
  return pad_backward_meta(PadMode::Reflect, 2, grad_output, self, padding);
}
Tensor replication_pad1d_backward(const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef padding) {
  return pad_backward_meta(PadMode::Replicate, 1, grad_output, self, padding);
}
Tensor replication_pad2d_backward(const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef padding) {
  return pad_backward_meta(PadMode::Replicate, 2, grad_output, self, padding);
}

}  // namespace opd::native
