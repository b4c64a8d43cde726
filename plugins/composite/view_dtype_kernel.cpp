// view.dtype: self's storage read as another dtype (x.view(torch.int32)), a view sharing
// self's storage and version counter.
//
// Note [Viewing as another dtype]
// Elements of the same size keep self's geometry. A smaller element splits each element of the
// last dimension, which must be contiguous (stride 1), into several: that dimension and the
// storage offset grow by the ratio of the sizes, the other strides too. A larger element merges
// them: the last dimension's size, the storage offset and the other strides must divide by the
// ratio. A 0-dim tensor has no last dimension to split or merge. The checks and their texts are
// PyTorch 1.13's (view_dtype in TensorConversions.cpp), in its order.

#include <vector>

#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"

namespace opd::native {

Tensor view_dtype(const Tensor& self, ScalarType dtype) {
  const TensorImpl& impl = *self.unsafe_get_impl();
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  std::vector<int64_t> strides(self.strides().begin(), self.strides().end());
  int64_t offset = self.storage_offset();
  const auto self_size = static_cast<int64_t>(self.element_size());
  const auto new_size = static_cast<int64_t>(element_size(dtype));
  if (self_size != new_size) {
    const ScalarType from = self.scalar_type();
    OPD_CHECK(self.dim() != 0, "self.dim() cannot be 0 to view {} as {} (different element sizes)",
              from, dtype);
    const int64_t last = self.dim() - 1;
    if (self_size > new_size) {
      const int64_t ratio = self_size / new_size;
      OPD_CHECK(strides[last] == 1,
                "self.stride(-1) must be 1 to view {} as {} (different element sizes), but got {}",
                from, dtype, strides[last]);
      for (int64_t d = 0; d < last; ++d) strides[d] *= ratio;
      sizes[last] *= ratio;
      offset *= ratio;
    } else {
      const int64_t ratio = new_size / self_size;
      OPD_CHECK(sizes[last] % ratio == 0,
                "self.size(-1) must be divisible by {} to view {} as {} (different element "
                "sizes), but got {}",
                ratio, from, dtype, sizes[last]);
      OPD_CHECK(offset % ratio == 0,
                "self.storage_offset() must be divisible by {} to view {} as {} (different "
                "element sizes), but got {}",
                ratio, from, dtype, offset);
      OPD_CHECK(strides[last] == 1,
                "self.stride(-1) must be 1 to view {} as {} (different element sizes), but got {}",
                from, dtype, strides[last]);
      for (int64_t d = 0; d < last; ++d) {
        OPD_CHECK(strides[d] % ratio == 0,
                  "self.stride({}) must be divisible by {} to view {} as {} (different element "
                  "sizes), but got {}",
                  d, ratio, from, dtype, strides[d]);
        strides[d] /= ratio;
      }
      sizes[last] /= ratio;
      offset /= ratio;
    }
  }
  // The bytes reached are self's (Note [Viewing as another dtype]), so the geometry needs no
  // check against the storage beyond make_view's of self.
  auto view = make_intrusive<TensorImpl>(impl.storage(), sizes, strides, offset, dtype,
                                         impl.device(), impl.version_counter());
  view->unsafe_set_key_set(impl.key_set());
  return Tensor(std::move(view));
}

}  // namespace opd::native
