#pragma once

// Devices and streams of the CUDA plugin: which GPU a call works on, and which stream it queues
// work on. PyTorch's c10::cuda::CUDAGuard and getCurrentCUDAStream, in small.
//
// Every kernel of the plugin runs under a DeviceGuard for its tensors' device, and launches on
// current_stream() of that device: the default (legacy) stream unless a StreamGuard on this
// thread chose another.

#include <cuda_runtime_api.h>

#include "opd/device.h"

namespace opd::cuda {

// The most devices the plugin serves: the size of its per-device tables (streams, cuBLAS
// handles, allocators). Devices past it are not counted.
inline constexpr int kMaxDevices = 64;

// Devices the driver reports; counted once when the plugin registers.
int device_count();
void set_device_count(int n);

// The index `device` names: its own, or the current device for "cuda" without one. Throws
// opd::Error "CUDA error: invalid device ordinal (cuda:3; this machine has 1 CUDA device)" for
// an index past device_count().
int device_index(const Device& device);

// The calling thread's current CUDA device.
int current_device();

// Makes `index` the thread's current device for its lifetime, then restores the previous one.
// Costs nothing when the device is already current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  explicit DeviceGuard(const Device& device) : DeviceGuard(device_index(device)) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  int index() const { return index_; }

 private:
  int index_;
  int previous_;
};

// The stream work for device `index` is queued on by this thread (null: the default stream).
cudaStream_t current_stream(int index);

// Makes `stream` the thread's current stream for device `index` for its lifetime.
class StreamGuard {
 public:
  StreamGuard(int index, cudaStream_t stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  int index_;
  cudaStream_t previous_;
};

}  // namespace opd::cuda
