// The view operators: each result shares self's storage and version counter (opd::make_view);
// only the geometry differs, computed by common/view_shape.h.

#include "common/view_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

Tensor view_with(const Tensor& self, const StridedGeometry& g) {
  return make_view(self, g.sizes, g.strides, g.storage_offset);
}

}  // namespace

Tensor view(const Tensor& self, IntArrayRef size) {
  return view_with(self, view_geometry(geometry_of(self), size));
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset) {
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  check_as_strided(size, stride, offset);
  return make_view(self, size, stride, offset);
}

Tensor transpose_int(const Tensor& self, int64_t dim0, int64_t dim1) {
  return view_with(self, transpose_geometry(geometry_of(self), dim0, dim1));
}

Tensor t(const Tensor& self) { return view_with(self, t_geometry(geometry_of(self))); }

Tensor permute(const Tensor& self, IntArrayRef dims) {
  return view_with(self, permute_geometry(geometry_of(self), dims));
}

// `implicit` only matters to tracers (PyTorch ignores it too).
Tensor expand(const Tensor& self, IntArrayRef size, bool /*implicit*/) {
  return view_with(self,
                   expand_geometry(geometry_of(self), size, self.scalar_type(), self.device()));
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) {
  return view_with(self, squeeze_dim_geometry(geometry_of(self), dim));
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  return view_with(self, unsqueeze_geometry(geometry_of(self), dim));
}

Tensor slice_Tensor(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step) {
  return view_with(self, slice_geometry(geometry_of(self), dim, start, end, step));
}

Tensor alias(const Tensor& self) { return view_with(self, geometry_of(self)); }

Tensor select_int(const Tensor& self, int64_t dim, int64_t index) {
  return view_with(self, select_geometry(geometry_of(self), dim, index));
}

}  // namespace opd::native
