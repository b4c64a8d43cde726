#include "cuda/allocator.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "common/factory_shape.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "opd/error.h"
#include "opd/plugin.h"

namespace opd::cuda {

namespace {

class CudaMemory final : public DeviceMemory {
 public:
  explicit CudaMemory(int index) : index_(index) {}
  void* allocate(size_t nbytes) override {
    DeviceGuard guard(index_);
    void* ptr = nullptr;
    const cudaError_t err = cudaMalloc(&ptr, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    check(err, "cudaMalloc(&ptr, nbytes)");
    return ptr;
  }
  // Never throws: it runs from empty_cache at plugin shutdown and from the allocator's
  // destructor. At process exit the runtime may be gone already; nothing is left to give back
  // then. cudaFree runs on the block's own device (its implicit synchronisation is that
  // device's, and it must not create a context on whichever device the thread has current).
  void release(void* ptr) override {
    int previous = index_;
    const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != index_ &&
                          cudaSetDevice(index_) == cudaSuccess;
    (void)cudaFree(ptr);
    if (switched) (void)cudaSetDevice(previous);
    (void)cudaGetLastError();  // no failure here may surface at the next check
  }
  std::string name() const override { return fmt::format("cuda:{}", index_); }

 private:
  int index_;
};

std::mutex g_mutex;
std::atomic<bool> g_exiting{false};

// The allocators live until the library is unloaded (no storage of it is alive then) or the
// process exits. At exit, storages in the host's static objects may die after these (the
// plugin's statics go first): their memory is then left to the process's end.
struct Allocators {
  std::array<std::unique_ptr<CachingAllocator>, kMaxDevices> by_device;
  ~Allocators() { g_exiting.store(true); }
};
Allocators g_allocators;

void free_block(void* data, void* allocator) {
  if (g_exiting.load(std::memory_order_relaxed)) return;
  static_cast<CachingAllocator*>(allocator)->free(data);
}

}  // namespace

CachingAllocator& allocator(int index) {
  OPD_CHECK(index >= 0 && index < kMaxDevices, "CUDA allocator: device index {} out of range",
            index);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& slot = g_allocators.by_device[index];
  if (!slot) slot = std::make_unique<CachingAllocator>(std::make_unique<CudaMemory>(index));
  return *slot;
}

Storage allocate_storage(size_t nbytes, int index) {
  const Device device(DeviceType::CUDA, static_cast<int8_t>(index));
  if (nbytes == 0)
    return Storage::create(nullptr, 0, device, nullptr, nullptr, this_plugin_reference());
  CachingAllocator& a = allocator(index);
  void* data = a.allocate(nbytes, reinterpret_cast<StreamId>(current_stream(index)));
  return Storage::create(data, nbytes, device, &free_block, &a, this_plugin_reference());
}

Tensor empty_strided_cuda(IntArrayRef size, IntArrayRef stride, ScalarType dtype, int index) {
  const size_t nbytes = factory::storage_nbytes(size, stride, element_size(dtype));
  return make_tensor(allocate_storage(nbytes, index), size, stride, 0, dtype,
                     Device(DeviceType::CUDA, static_cast<int8_t>(index)));
}

Tensor empty_cuda(IntArrayRef size, ScalarType dtype, int index, MemoryFormat format) {
  const size_t nbytes = factory::storage_nbytes_contiguous(size, element_size(dtype));
  const auto strides = factory::strides_for_memory_format(size, format);
  return make_tensor(allocate_storage(nbytes, index), size,
                     IntArrayRef(strides.data(), strides.size()), 0, dtype,
                     Device(DeviceType::CUDA, static_cast<int8_t>(index)));
}

void empty_all_caches() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& a : g_allocators.by_device) {
    if (a) a->empty_cache();
  }
}

}  // namespace opd::cuda
