// The in-place view operators (PyTorch's `inplace_view` tag): squeeze_, unsqueeze_, t_,
// transpose_, as_strided_ and their aliases swapdims_ / swapaxes_. Each gives self, in place,
// the geometry its out-of-place view would have (common/view_shape.h computes both), keeping
// the storage; written once for every backend, Meta included.
//
// Note [In-place view operators]
// Only the TensorImpl's sizes, strides and offset change (set_sizes_and_strides, which checks
// them against the storage as make_view does); no element is read or written. Their version
// counter is bumped all the same, as PyTorch's ADInplaceOrView kernel bumps it for every
// in-place operator: a tensor saved for backward before the change must not be unpacked after
// it. Autograd records them as any in-place operator (derivatives.yaml's entries give the
// gradient of the out-of-place view, from self's geometry before the call).

#include <vector>

#include "common/view_shape.h"
#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

Tensor& set_geometry(Tensor& self, const StridedGeometry& g) {
  self.unsafe_get_impl()->set_sizes_and_strides(g.sizes, g.strides, g.storage_offset);
  self.bump_version();
  return self;
}

}  // namespace

// Every dimension of size 1 dropped, as squeeze.
Tensor& squeeze_(Tensor& self) {
  StridedGeometry g;
  g.storage_offset = self.storage_offset();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.size(d) == 1) continue;
    g.sizes.push_back(self.size(d));
    g.strides.push_back(self.stride(d));
  }
  return set_geometry(self, g);
}

Tensor& squeeze__dim(Tensor& self, int64_t dim) {
  return set_geometry(self, squeeze_dim_geometry(geometry_of(self), dim));
}

Tensor& unsqueeze_(Tensor& self, int64_t dim) {
  return set_geometry(self, unsqueeze_geometry(geometry_of(self), dim));
}

Tensor& t_(Tensor& self) {
  OPD_CHECK(self.dim() <= 2, "t_() expects a tensor with <= 2 dimensions, but self is {}D",
            self.dim());
  return set_geometry(self, t_geometry(geometry_of(self)));
}

Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1) {
  return set_geometry(self, transpose_geometry(geometry_of(self), dim0, dim1));
}

// as_strided's checks (sizes and strides, the bounds of the storage as PyTorch's setStorage
// error) through the view it would return.
Tensor& as_strided_(Tensor& self, IntArrayRef size, IntArrayRef stride,
                    std::optional<int64_t> storage_offset) {
  const Tensor view = opd::as_strided(self, size, stride, storage_offset);
  return set_geometry(self, geometry_of(view));
}

// PyTorch's aliases of transpose_ (CompositeImplicitAutograd: transpose_'s autograd).
Tensor& swapdims_(Tensor& self, int64_t dim0, int64_t dim1) {
  self.transpose_(dim0, dim1);
  return self;
}

Tensor& swapaxes_(Tensor& self, int64_t axis0, int64_t axis1) {
  self.transpose_(axis0, axis1);
  return self;
}

}  // namespace opd::native
