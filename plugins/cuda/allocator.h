#pragma once

// Memory of the CUDA plugin's tensors: one CachingAllocator per device (Note [Caching
// allocator]). Every storage holds this plugin's reference (Note [Storage ownership]), so the
// plugin stays mapped while any of its device memory is alive, and returns its block to the
// cache of the stream it was allocated for.

#include <cstddef>

#include "cuda/caching_allocator.h"
#include "opd/scalar_type.h"
#include "opd/storage.h"
#include "opd/tensor.h"

namespace opd::cuda {

// The allocator of device `index` (created on first use).
CachingAllocator& allocator(int index);

// A storage of `nbytes` uninitialised bytes on device `index`, for the current stream.
Storage allocate_storage(size_t nbytes, int index);

// New tensors of uninitialised device memory; geometry as opd::cpu::empty_strided_cpu and
// empty_cpu.
Tensor empty_strided_cuda(IntArrayRef size, IntArrayRef stride, ScalarType dtype, int index);
Tensor empty_cuda(IntArrayRef size, ScalarType dtype, int index,
                  MemoryFormat format = MemoryFormat::Contiguous);

// Releases the cached free memory of every device that has an allocator.
void empty_all_caches() noexcept;

}  // namespace opd::cuda
