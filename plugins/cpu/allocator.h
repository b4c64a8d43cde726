#pragma once

// Memory of the CPU plugin's tensors. Every storage it makes holds this plugin's reference as
// its owner (Note [Storage ownership]), so the plugin stays mapped while any of them lives, and
// is freed by this plugin's deleter.

#include <cstddef>
#include <cstdint>

#include "opd/scalar_type.h"
#include "opd/storage.h"
#include "opd/tensor.h"

namespace opd::cpu {

// Alignment of every allocation: a cache line, and enough for any SIMD load.
inline constexpr size_t kAlignment = 64;

// A CPU storage of `nbytes` uninitialised bytes at a kAlignment-aligned address. A zero-byte
// storage is valid and has no memory (null data), as PyTorch's. Throws opd::Error "cpu
// allocator: not enough memory: you tried to allocate 1234 bytes." when the memory is not there.
Storage allocate_storage(size_t nbytes);

// A new tensor of uninitialised memory with this geometry; its storage covers exactly what the
// geometry reaches (factory::storage_nbytes). REQUIRES: the geometry passed
// factory::check_empty_strided.
Tensor empty_strided_cpu(IntArrayRef size, IntArrayRef stride, ScalarType dtype);

// A new dense tensor of uninitialised memory, laid out in `format` (see
// factory::strides_for_memory_format, which may throw). Throws as
// factory::storage_nbytes_contiguous on a size past INT64_MAX bytes. REQUIRES: sizes non-negative.
Tensor empty_cpu(IntArrayRef size, ScalarType dtype,
                 MemoryFormat format = MemoryFormat::Contiguous);

}  // namespace opd::cpu
