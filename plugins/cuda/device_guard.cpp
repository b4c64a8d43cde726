#include "cuda/device_guard.h"

#include <array>
#include <atomic>

#include "cuda/cuda_check.h"
#include "opd/error.h"

namespace opd::cuda {

namespace {
std::atomic<int> g_device_count{0};
thread_local std::array<cudaStream_t, kMaxDevices> t_streams{};
}  // namespace

int device_count() { return g_device_count.load(std::memory_order_relaxed); }

void set_device_count(int n) {
  g_device_count.store(n < kMaxDevices ? n : kMaxDevices, std::memory_order_relaxed);
}

int current_device() {
  int index = 0;
  OPD_CUDA_CHECK(cudaGetDevice(&index));
  return index;
}

int device_index(const Device& device) {
  OPD_CHECK(device.is_cuda(), "expected a CUDA device, got {}", device);
  if (!device.has_index()) return current_device();
  const int n = device_count();
  OPD_CHECK(device.index < n,
            "CUDA error: invalid device ordinal ({}; this machine has {} CUDA {})", device, n,
            n == 1 ? "device" : "devices");
  return device.index;
}

DeviceGuard::DeviceGuard(int index) : index_(index), previous_(current_device()) {
  if (index_ != previous_) OPD_CUDA_CHECK(cudaSetDevice(index_));
}

DeviceGuard::~DeviceGuard() {
  // A destructor cannot report the failure; it must not surface at the next check either.
  if (index_ != previous_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

cudaStream_t current_stream(int index) {
  return index >= 0 && index < kMaxDevices ? t_streams[index] : nullptr;
}

StreamGuard::StreamGuard(int index, cudaStream_t stream)
    : index_(index), previous_(current_stream(index)) {
  OPD_CHECK(index >= 0 && index < kMaxDevices, "StreamGuard: device index {} out of range", index);
  t_streams[index] = stream;
}

StreamGuard::~StreamGuard() { t_streams[index_] = previous_; }

}  // namespace opd::cuda
