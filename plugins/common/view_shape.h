#pragma once

// The geometry of views: given a tensor's sizes, strides and storage offset, the sizes, strides
// and offset of view, expand, permute, transpose, t, squeeze, unsqueeze, slice, select and
// as_strided, with PyTorch's rules and error messages. Pure functions over integers, so the
// composite view kernels (plugins/composite/view_kernels.cpp) and any backend that needs the same
// answer agree, and tests check them without a dispatcher.
//
// Errors: opd::Error (PyTorch's RuntimeError) unless noted; dimension arguments are wrapped with
// opd::maybe_wrap_dim, which throws IndexError.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opd/layout.h"
#include "opd/tensor.h"

namespace opd {

// Sizes, strides and storage offset of a strided tensor.
struct StridedGeometry {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;

  bool operator==(const StridedGeometry&) const = default;
};

// The geometry of `t` (REQUIRES: t.defined()).
StridedGeometry geometry_of(const Tensor& t);

// `shape` with its one -1 replaced so that the product is `numel` (PyTorch's infer_size).
// Throws:
//   "only one dimension can be inferred"
//   "invalid shape dimension -2"
//   "shape '[2, 5]' is invalid for input of size 6"
//   "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension
//    size -1 can be any value and is ambiguous"
std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel);

// The strides that let a tensor of sizes `old_sizes` / strides `old_strides` be viewed as
// `new_sizes` (same number of elements) without copying, or nullopt when a dimension of the new
// shape would span two non-contiguous chunks of the old one (PyTorch's computeStride).
std::optional<std::vector<int64_t>> compute_stride(IntArrayRef old_sizes, IntArrayRef old_strides,
                                                   IntArrayRef new_sizes);

// view(shape): -1 inferred, strides from compute_stride. Throws as infer_size, and
//   "view size is not compatible with input tensor's size and stride (at least one dimension
//    spans across two contiguous subspaces). Use .reshape(...) instead."
StridedGeometry view_geometry(const StridedGeometry& self, IntArrayRef shape);

// expand(size): new leading dimensions and size-1 dimensions get stride 0; -1 keeps a size.
// `self_type` names the tensor in the first message ("torch.FloatTensor", see
// legacy_type_name). Throws:
//   "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be
//    greater or equal to the number of dimensions in the tensor (2)"
//   "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"
//   "The expanded size of the tensor (4) must match the existing size (3) at non-singleton
//    dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]"
StridedGeometry expand_geometry(const StridedGeometry& self, IntArrayRef size,
                                std::string_view self_type);
// The same, naming the tensor by legacy_type_name(dtype, device), built only for the message.
StridedGeometry expand_geometry(const StridedGeometry& self, IntArrayRef size, ScalarType dtype,
                                Device device);

// PyTorch's name of a tensor type in messages: "torch.FloatTensor", "torch.cuda.LongTensor",
// "torch.meta.FloatTensor".
std::string legacy_type_name(ScalarType dtype, Device device);

// permute(dims). Throws
//   "permute(sparse_coo): number of dimensions in the tensor input does not match the length of
//    the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 3"
//   "permute(): duplicate dims are not allowed."
StridedGeometry permute_geometry(const StridedGeometry& self, IntArrayRef dims);

// transpose(dim0, dim1); the same geometry when dim0 == dim1.
StridedGeometry transpose_geometry(const StridedGeometry& self, int64_t dim0, int64_t dim1);

// t(): transpose(0, 1) of a 2-D tensor, the same geometry for 0-D and 1-D. Throws
//   "t() expects a tensor with <= 2 dimensions, but self is 3D"
StridedGeometry t_geometry(const StridedGeometry& self);

// squeeze(dim): dimension `dim` removed when its size is 1, otherwise unchanged.
StridedGeometry squeeze_dim_geometry(const StridedGeometry& self, int64_t dim);

// unsqueeze(dim), dim in [-ndim-1, ndim].
StridedGeometry unsqueeze_geometry(const StridedGeometry& self, int64_t dim);

// slice(dim, start, end, step): start and end default to 0 and the size, count from the end when
// negative and clamp into [0, size] as Python slices do. Throws
//   IndexError "slice() cannot be applied to a 0-dim tensor."
//   "slice step must be positive"
StridedGeometry slice_geometry(const StridedGeometry& self, int64_t dim,
                               std::optional<int64_t> start, std::optional<int64_t> end,
                               int64_t step);

// select(dim, index): dimension `dim` removed at `index` (negative counts from the end). Throws
// IndexError:
//   "select() cannot be applied to a 0-dim tensor."
//   "select(): index 5 out of range for tensor of size [3] at dimension 0"
StridedGeometry select_geometry(const StridedGeometry& self, int64_t dim, int64_t index);

// as_strided's argument checks (bounds against the storage are make_view's). Throws
//   "mismatch in length of strides and shape"
//   "as_strided: Negative strides are not supported at the moment, got strides: [-1, 1]"
//   "Tensor: invalid storage offset -1"
void check_as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);

// flatten(start_dim, end_dim)'s target shape: dimensions start_dim..end_dim merged into one.
// A 0-dim tensor flattens to [1]. Throws
//   "flatten() has invalid args: start_dim cannot come after end_dim"
std::vector<int64_t> flatten_shape(IntArrayRef sizes, int64_t start_dim, int64_t end_dim);

// No two elements share memory and the elements fill a dense block, in some order of dimensions
// (PyTorch's is_non_overlapping_and_dense): such a tensor can be copied keeping its strides.
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

// Whether the strides are those of `format` for these sizes, ignoring size-1 dimensions, as
// PyTorch's is_contiguous(memory_format). ChannelsLast needs 4 dimensions, ChannelsLast3d 5;
// Preserve asks about the plain row-major layout, as Contiguous does.
bool is_contiguous_in(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format);

// The memory format whose layout the strides follow: ChannelsLast(3d) when they are that format's
// and not plain contiguous, otherwise Contiguous (PyTorch's suggest_memory_format, exact match).
MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides);

}  // namespace opd
