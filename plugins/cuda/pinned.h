#pragma once

// Pinned host memory of the CUDA plugin: CPU tensors whose memory the device reads and writes
// directly, so that a copy between them and a device can be queued without waiting for it
// (Note [Pinned host allocator], Note [CUDA copies]).

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/host_allocator.h"
#include "opd/storage.h"
#include "opd/tensor.h"

namespace opd::cuda {

// The process's pinned host allocator (created on first use).
HostCachingAllocator& host_allocator();

// A CPU storage of `nbytes` uninitialised bytes of pinned memory.
Storage allocate_pinned_storage(size_t nbytes);

// Whether t's memory is a block of host_allocator(): a copy may then be queued with
// record_host_use instead of waiting.
bool is_pinned_block(const Tensor& t);

// Records that work queued on `stream` now uses t's block, which is therefore not handed out
// again before that work is done. REQUIRES: is_pinned_block(t).
void record_host_use(const Tensor& t, cudaStream_t stream);

// Releases the free pinned blocks (at plugin shutdown).
void empty_host_cache() noexcept;

}  // namespace opd::cuda
