// The CUDA plugin's own operators (namespace `cuda`), reached through opd/cuda.h: device count,
// the caching allocator's statistics and cache, and device synchronisation. Each takes the
// device it is about, which is also what dispatches it to this plugin.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda/allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "opd/plugin.h"

namespace {

using opd::Device;

int64_t device_count(Device) { return opd::cuda::device_count(); }

// [allocated, reserved, peak allocated, allocations, cudaMalloc calls, cudaFree calls], in the
// order of opd::cuda::MemoryStats.
std::vector<int64_t> memory_stats(Device device) {
  const opd::cuda::AllocatorStats s = opd::cuda::allocator(opd::cuda::device_index(device)).stats();
  return {s.allocated_bytes, s.reserved_bytes,    s.peak_allocated_bytes,
          s.num_allocs,      s.num_device_allocs, s.num_device_frees};
}

void empty_cache(Device device) {
  opd::cuda::allocator(opd::cuda::device_index(device)).empty_cache();
}

void reset_peak_memory_stats(Device device) {
  opd::cuda::allocator(opd::cuda::device_index(device)).reset_peak();
}

void synchronize(Device device) {
  opd::cuda::DeviceGuard guard(device);
  OPD_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

OPD_LIBRARY(cuda, m) {
  m.def("device_count(Device device) -> int");
  m.def("memory_stats(Device device) -> int[]");
  m.def("empty_cache(Device device) -> ()");
  m.def("reset_peak_memory_stats(Device device) -> ()");
  m.def("synchronize(Device device) -> ()");
}

OPD_LIBRARY_IMPL(cuda, CUDA, m) {
  m.impl("device_count", &device_count);
  m.impl("memory_stats", &memory_stats);
  m.impl("empty_cache", &empty_cache);
  m.impl("reset_peak_memory_stats", &reset_peak_memory_stats);
  m.impl("synchronize", &synchronize);
}
