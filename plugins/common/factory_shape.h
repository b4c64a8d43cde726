#pragma once

// The metadata rules of the factory operators (empty, empty_strided, arange, rand, randn) and of
// resize_, shared by the CPU, Meta and CUDA plugins so that their results always agree: which
// arguments are refused and with which message, the dtype and length of arange, the strides of a
// memory format and the bytes a geometry needs (PyTorch's computeStorageNbytes). Nothing here
// allocates tensor memory.
//
// Every check throws opd::Error (PyTorch's RuntimeError) unless stated otherwise, with
// PyTorch's text where PyTorch has one.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "common/small_vector.h"
#include "opd/layout.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd::factory {

// "Trying to create tensor with negative dimension -1: [-1, 2]".
void check_size_nonnegative(IntArrayRef size);

// The dtype of a factory's result: `dtype`, or Float when none is given. Also checks the
// options no plugin supports: a layout other than Strided ("<op>: only the Strided layout is
// supported, got Sparse") and pin_memory=true ("<op>: Only dense CPU tensors can be pinned
// (pin_memory=True on the <backend> plugin)"). `backend` names the plugin in that message
// ("meta", "cuda"); the CPU plugin pins its results itself and passes no pin_memory here.
ScalarType factory_dtype(std::string_view op, std::optional<ScalarType> dtype,
                         std::optional<Layout> layout, std::optional<bool> pin_memory,
                         std::string_view backend);

// Bytes a dense tensor of `size` needs from the start of its storage, elements before
// `storage_offset` included (PyTorch's computeStorageNbytesContiguous); 0 when it has no
// elements. Throws "Storage size calculation overflowed with sizes=[...]" past INT64_MAX.
// REQUIRES: sizes non-negative.
size_t storage_nbytes_contiguous(IntArrayRef size, size_t itemsize, int64_t storage_offset = 0);

// Bytes a tensor of this geometry reaches from the start of its storage (PyTorch's
// computeStorageNbytes); 0 when it has no elements. Throws "Storage size calculation overflowed
// with sizes=[...] and strides=[...]" past INT64_MAX. REQUIRES: sizes non-negative.
size_t storage_nbytes(IntArrayRef size, IntArrayRef stride, size_t itemsize,
                      int64_t storage_offset = 0);

// empty_strided's checks: sizes non-negative, as many strides as sizes ("mismatch in length of
// strides and shape"), strides non-negative.
void check_empty_strided(IntArrayRef size, IntArrayRef stride);

// The strides of a new tensor of `size` in `format` (PyTorch's empty_tensor_restride):
// Contiguous, ChannelsLast (rank 4: "required rank 4 tensor to use channels_last format"),
// ChannelsLast3d (rank 5). Preserve has no meaning for a new tensor: "unsupported memory format
// Preserve".
common::DimVector strides_for_memory_format(IntArrayRef size, MemoryFormat format);

// arange's dtype when none is given: Long when start, end and step are all integral (bool counts
// as integral), else the default Float; `dtype` when given.
ScalarType arange_dtype(const Scalar& start, const Scalar& end, const Scalar& step,
                        std::optional<ScalarType> dtype);

// The number of elements of arange(start, end, step) in `dtype`, after PyTorch's checks:
//   Error "\"arange\" not implemented for 'Bool'" (Bool and complex dtypes)
//   "step must be nonzero"
//   "unsupported range: inf -> 1" (start or end not finite)
//   "upper bound and larger bound inconsistent with step sign"
//   "invalid size, possible overflow?"
// Long computes the length in integer arithmetic, other dtypes in double, as PyTorch does. The
// element i is then start + i * step computed in arange_acc_type(dtype) and cast to dtype.
int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step, ScalarType dtype);

// The type arange's values are computed in (PyTorch's CPU acc_type): Int64 for integral dtypes,
// Float32 for Half and BFloat16, Float64 for Float32 and Float64.
ScalarType arange_acc_type(ScalarType dtype);

// rand and randn draw floating values only: Error "\"rand\" not implemented for 'Long'".
void check_random_dtype(std::string_view op, ScalarType dtype);

// Note [Factory versions]
// A new tensor starts at version 0, as PyTorch's `_version` does, although a factory (zeros,
// ones, full, the *_like ones, clone, _to_copy) writes it with fill_ or copy_, whose kernels bump
// the version of what they write. The factory's own write makes the tensor; it is not an
// in-place change that autograd could have saved a version before. PyTorch skips it by running
// factories below ADInplaceOrView, where its versions are bumped; here each kernel bumps its
// target itself, so a factory writes through write_handle(result) instead: a second handle on
// the same memory, geometry and key set with a version counter of its own, which goes with the
// handle. The result's counter then counts only writes made through it or its views.
Tensor write_handle(const Tensor& fresh);

// The geometry resize_ gives `self`: `size` with the strides of `format` (contiguous by
// default; Preserve is refused as "Unsupported memory format Preserve"), the same storage
// offset, and `nbytes`, the bytes it needs from the start of the storage (0 when it has no
// elements). When nbytes exceeds the current storage's, the backend replaces the storage by one
// of nbytes bytes holding the old bytes first, then sets the geometry with
// TensorImpl::set_storage_and_geometry; otherwise it keeps the storage
// (TensorImpl::set_sizes_and_strides). Growing past a storage that is not resizable (memory that
// numpy, DLPack or the caller of from_blob also reads: Note [Resizable storage] in opd/storage.h)
// throws "Trying to resize storage that is not resizable", as PyTorch does; every backend's
// resize_ calls this first, so CPU, CUDA and Meta refuse alike.
struct ResizeGeometry {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;
  size_t nbytes = 0;
  bool needs_new_storage = false;
};
ResizeGeometry resize_geometry(const Tensor& self, IntArrayRef size,
                               std::optional<MemoryFormat> format);

// resize_ on a backend with memory: applies resize_geometry to `self`, replacing its storage by
// allocate(nbytes) filled with copy_bytes(new, old, old_nbytes) when it must grow. Storages have a
// fixed size, so views of the old storage keep it (PyTorch would grow it under them). Throws as
// resize_geometry does, before allocating.
Tensor& resize_with(Tensor& self, IntArrayRef size, std::optional<MemoryFormat> format,
                    const std::function<Storage(size_t)>& allocate,
                    const std::function<void(void*, const void*, size_t)>& copy_bytes);

}  // namespace opd::factory
