#pragma once

// CUDA from the host program's side, whether or not the CUDA plugin is loaded: whether devices
// are usable, and the caching allocator's statistics and cache (Note [Caching allocator] in
// plugins/cuda). Each call goes through the dispatcher to the `cuda::` operators the plugin
// registers; without them (the plugin not loaded, or unavailable on this machine),
// is_available() is false, device_count() is 0, and the others throw opd::Error saying why.

#include <cstdint>
#include <string>
#include <vector>

#include "opd/device.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/plugin_manager.h"

namespace opd::cuda {

// What opd::cuda::memory_stats reports for one device, as CachingAllocator counts it.
struct MemoryStats {
  int64_t allocated_bytes = 0;       // handed out to tensors (rounded sizes)
  int64_t reserved_bytes = 0;        // obtained from the device by cudaMalloc
  int64_t peak_allocated_bytes = 0;  // since the start or reset_peak_memory_stats
  int64_t num_allocs = 0;            // allocations served
  int64_t num_device_allocs = 0;     // cudaMalloc calls
  int64_t num_device_frees = 0;      // cudaFree calls
};

namespace detail {
inline std::optional<OperatorHandle> cuda_op(const char* name) {
  return Dispatcher::singleton().find_schema(OperatorName(std::string("cuda::") + name, ""));
}
inline OperatorHandle cuda_op_or_throw(const char* name) {
  if (auto op = cuda_op(name)) return *op;
  std::string why = "the cuda plugin is not loaded";
  try {
    const PluginStatus s = plugins().status("cuda");
    why = "the cuda plugin is " + std::string(to_string(s.state));
    if (!s.reason.empty()) why += ": " + s.reason;
  } catch (const Error&) {
    why = "no cuda plugin was found in the plugin search path";
  }
  throw Error("CUDA is not available (" + why + ")");
}
}  // namespace detail

// Whether the CUDA plugin is loaded and found at least one device.
inline bool is_available() { return detail::cuda_op("device_count").has_value(); }

inline int device_count() {
  auto op = detail::cuda_op("device_count");
  if (!op) return 0;
  return static_cast<int>(op->typed<int64_t(Device)>().call(Device(DeviceType::CUDA)));
}

inline MemoryStats memory_stats(Device device = Device(DeviceType::CUDA)) {
  const std::vector<int64_t> v =
      detail::cuda_op_or_throw("memory_stats").typed<std::vector<int64_t>(Device)>().call(device);
  OPD_CHECK(v.size() == 6, "cuda::memory_stats returned {} values, expected 6", v.size());
  return MemoryStats{v[0], v[1], v[2], v[3], v[4], v[5]};
}

// Releases the cached memory of `device` that no tensor uses.
inline void empty_cache(Device device = Device(DeviceType::CUDA)) {
  detail::cuda_op_or_throw("empty_cache").typed<void(Device)>().call(device);
}

inline void reset_peak_memory_stats(Device device = Device(DeviceType::CUDA)) {
  detail::cuda_op_or_throw("reset_peak_memory_stats").typed<void(Device)>().call(device);
}

// Waits for all work queued on `device`.
inline void synchronize(Device device = Device(DeviceType::CUDA)) {
  detail::cuda_op_or_throw("synchronize").typed<void(Device)>().call(device);
}

}  // namespace opd::cuda
