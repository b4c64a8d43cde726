// The copying variants of the view operators (view_copy, transpose_copy.int, ..., tagged
// view_copy) and as_strided_scatter, the functional form of writing into an as_strided view.
//
// Note [View copies]
// A *_copy operator is its view followed by clone(): the same values in new memory, laid out as
// clone's preserve format lays out the view (PyTorch's generated kernels; a transposed copy of a
// contiguous tensor keeps the transposed strides, an expanded or gapped view becomes
// contiguous). They are CompositeExplicitAutograd with their views' formulas in
// derivatives.yaml, not CompositeImplicitAutograd: an implicit kernel would be decomposed at the
// Autograd key, above the Functionalize and Python keys, and neither
// functionalize(remove="mutations_and_views"), which replays views as these (Note [Views under
// functionalize]), nor a tracer below it would see the operator itself. view_copy of a tensor
// the view cannot describe (a transposed one flattened) copies as reshape does, as PyTorch's.

#include <optional>
#include <vector>

#include "common/output.h"
#include "common/view_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor view_copy(const Tensor& self, IntArrayRef size) {
  const std::vector<int64_t> sizes = infer_size(size, self.numel());
  if (!compute_stride(self.sizes(), self.strides(), sizes)) {
    return opd::clone(self, MemoryFormat::Contiguous).view(sizes);  // already a new tensor
  }
  return opd::clone(self.view(sizes));
}

Tensor view_copy_dtype(const Tensor& self, ScalarType dtype) {
  return opd::clone(self.view(dtype));
}

Tensor alias_copy(const Tensor& self) { return opd::clone(self); }

Tensor detach_copy(const Tensor& self) { return opd::clone(opd::detach(self)); }

Tensor as_strided_copy(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                       std::optional<int64_t> storage_offset) {
  return opd::clone(opd::as_strided(self, size, stride, storage_offset));
}

Tensor transpose_copy_int(const Tensor& self, int64_t dim0, int64_t dim1) {
  return opd::clone(opd::transpose(self, dim0, dim1));
}

Tensor t_copy(const Tensor& self) { return opd::clone(opd::t(self)); }

Tensor permute_copy(const Tensor& self, IntArrayRef dims) {
  return opd::clone(opd::permute(self, dims));
}

Tensor expand_copy(const Tensor& self, IntArrayRef size, bool implicit) {
  return opd::clone(self.expand(size, implicit));
}

Tensor squeeze_copy(const Tensor& self) { return opd::clone(opd::squeeze(self)); }

Tensor squeeze_copy_dim(const Tensor& self, int64_t dim) {
  return opd::clone(opd::squeeze(self, dim));
}

Tensor unsqueeze_copy(const Tensor& self, int64_t dim) {
  return opd::clone(opd::unsqueeze(self, dim));
}

Tensor slice_copy_Tensor(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                         std::optional<int64_t> end, int64_t step) {
  return opd::clone(opd::slice(self, dim, start, end, step));
}

Tensor select_copy_int(const Tensor& self, int64_t dim, int64_t index) {
  return opd::clone(opd::select(self, dim, index));
}

Tensor diagonal_copy(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return opd::clone(opd::diagonal(self, offset, dim1, dim2));
}

// self cloned, with the view as_strided makes of the clone replaced by src. The view's positions
// are those of the clone's storage (offset 0): the gradient (derivatives.yaml) assumes a
// contiguous self, so one that requires grad must be, as PyTorch requires.
Tensor as_strided_scatter(const Tensor& self, const Tensor& src, IntArrayRef size,
                          IntArrayRef stride, std::optional<int64_t> storage_offset) {
  const bool requires_grad = self.unsafe_get_impl()->autograd_meta() && self.requires_grad();
  OPD_CHECK(!requires_grad || self.is_contiguous(),
            "as_strided_scatter is currently only supported for contiguous inputs");
  Tensor out = opd::clone(self);
  const Tensor view = opd::as_strided(out, size, stride, storage_offset);
  OPD_CHECK(view.sizes() == src.sizes(),
            "expected src to have a size equal to the slice of self. src size = {}, slice size = "
            "{}",
            common::shape_str(src.sizes()), common::shape_str(view.sizes()));
  view.copy_(src);
  return out;
}

}  // namespace opd::native
