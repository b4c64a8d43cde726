// reshape and flatten: a view when self's strides allow one, a contiguous copy otherwise.

#include <vector>

#include "common/view_shape.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  const std::vector<int64_t> sizes = infer_size(shape, self.numel());
  if (compute_stride(self.sizes(), self.strides(), sizes)) return self.view(sizes);
  return opd::clone(self, MemoryFormat::Contiguous).view(sizes);
}

Tensor flatten_using_ints(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  const std::vector<int64_t> shape = flatten_shape(self.sizes(), start_dim, end_dim);
  // Merging one dimension changes nothing: self itself, as PyTorch returns it.
  if (self.dim() != 0 && static_cast<int64_t>(shape.size()) == self.dim()) return self;
  return opd::reshape(self, shape);
}

}  // namespace opd::native
