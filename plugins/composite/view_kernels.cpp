// The view operators: each result shares self's storage and version counter (opd::make_view);
// only the geometry differs, computed by common/view_shape.h.

#include <algorithm>
#include <vector>

#include "common/output.h"
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
  // make_view refuses geometry beyond the storage with a ValueError naming itself; as_strided
  // is PyTorch's RuntimeError naming setStorage.
  const bool empty = std::find(size.begin(), size.end(), 0) != size.end();
  int64_t needed = 0;
  if (!empty) {
    needed = offset + 1;
    for (size_t d = 0; d < size.size(); ++d) needed += (size[d] - 1) * stride[d];
    needed *= static_cast<int64_t>(self.element_size());
  }
  OPD_CHECK(static_cast<uint64_t>(needed) <= self.storage().nbytes(),
            "setStorage: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a "
            "storage size of {} are out of bounds for storage of size {}",
            common::shape_str(size), common::shape_str(stride), offset, self.element_size(), needed,
            self.storage().nbytes());
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

// The two dimensions replaced by one at the end, whose stride is the sum of theirs. Its own view
// (not as_strided), so that its gradient is diagonal_scatter's for any input, an expanded one
// included.
Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t d1 = maybe_wrap_dim(dim1, self.dim()), d2 = maybe_wrap_dim(dim2, self.dim());
  OPD_CHECK(d1 != d2, "diagonal dimensions cannot be identical {}, {}", dim1, dim2);
  int64_t storage_offset = self.storage_offset();
  int64_t size = 0;
  if (offset >= 0) {
    size = std::max<int64_t>(std::min(self.size(d1), self.size(d2) - offset), 0);
  } else {
    size = std::max<int64_t>(std::min(self.size(d1) + offset, self.size(d2)), 0);
  }
  if (size > 0) {
    storage_offset += offset >= 0 ? offset * self.stride(d2) : -offset * self.stride(d1);
  }
  std::vector<int64_t> sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  sizes.push_back(size);
  strides.push_back(self.stride(d1) + self.stride(d2));
  return make_view(self, sizes, strides, storage_offset);
}

Tensor select_int(const Tensor& self, int64_t dim, int64_t index) {
  return view_with(self, select_geometry(geometry_of(self), dim, index));
}

}  // namespace opd::native
