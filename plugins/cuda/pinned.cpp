// Pinned host memory: the allocator behind it, and the kernels of is_pinned, _pin_memory and
// _opd_empty_pinned for CUDA (Note [Pinned memory] in plugins/composite/pinned_composites.cpp).

#include "cuda/pinned.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "common/factory_shape.h"
#include "common/view_shape.h"
#include "cuda/cuda_check.h"
#include "opd/native/CUDA.h"
#include "opd/plugin.h"

namespace opd::cuda {

namespace {

class CudaPinnedMemory final : public PinnedMemory {
 public:
  // Portable: pinned for every device, not only the one current at the allocation.
  void* allocate(size_t nbytes) override {
    void* ptr = nullptr;
    const cudaError_t err = cudaHostAlloc(&ptr, nbytes, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    check(err, "cudaHostAlloc(&ptr, nbytes, cudaHostAllocPortable)");
    return ptr;
  }
  // Never throws, for the reasons of CudaMemory::release (allocator.cpp).
  void release(void* ptr) override {
    (void)cudaFreeHost(ptr);
    (void)cudaGetLastError();
  }
  // On the device current to the caller, which is the stream's (the copies hold a DeviceGuard).
  Event record(StreamId stream) override {
    cudaEvent_t event = nullptr;
    OPD_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    const cudaError_t err = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) {
      (void)cudaEventDestroy(event);
      check(err, "cudaEventRecord(event, stream)");
    }
    return event;
  }
  bool query(Event event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err, "cudaEventQuery(event)");
    return true;
  }
  void synchronize(Event event) noexcept override {
    (void)cudaEventSynchronize(static_cast<cudaEvent_t>(event));
    (void)cudaGetLastError();
  }
  void destroy(Event event) override {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
    (void)cudaGetLastError();
  }
};

// As the device allocators (allocator.cpp): alive until the library is unloaded, when no
// storage of it is left, or the process exits, when storages that outlive it leak their block.
std::atomic<bool> g_exiting{false};
struct HostAllocatorSlot {
  std::once_flag once;
  std::unique_ptr<HostCachingAllocator> allocator;
  ~HostAllocatorSlot() { g_exiting.store(true); }
};
HostAllocatorSlot g_host;

void free_pinned_block(void* data, void* allocator) {
  if (g_exiting.load(std::memory_order_relaxed)) return;
  static_cast<HostCachingAllocator*>(allocator)->free(data);
}

}  // namespace

HostCachingAllocator& host_allocator() {
  std::call_once(g_host.once, [] {
    g_host.allocator = std::make_unique<HostCachingAllocator>(std::make_unique<CudaPinnedMemory>());
  });
  return *g_host.allocator;
}

Storage allocate_pinned_storage(size_t nbytes) {
  const Device cpu(DeviceType::CPU);
  if (nbytes == 0)
    return Storage::create(nullptr, 0, cpu, nullptr, nullptr, this_plugin_reference());
  HostCachingAllocator& a = host_allocator();
  return Storage::create(a.allocate(nbytes), nbytes, cpu, &free_pinned_block, &a,
                         this_plugin_reference());
}

bool is_pinned_block(const Tensor& t) {
  const StorageImpl* s = t.storage().unsafe_get_impl();
  return s != nullptr && s->deleter() == &free_pinned_block;
}

void record_host_use(const Tensor& t, cudaStream_t stream) {
  const StorageImpl* s = t.storage().unsafe_get_impl();
  OPD_INTERNAL_ASSERT(s != nullptr && s->deleter() == &free_pinned_block,
                      "record_host_use: not a pinned block");
  static_cast<HostCachingAllocator*>(s->deleter_ctx())
      ->record_use(s->data(), reinterpret_cast<StreamId>(stream));
}

// At shutdown, on one thread. An event that reports an error (a device in a sticky error state)
// keeps its block; the allocator's destructor waits for it and releases the rest.
void empty_host_cache() noexcept {
  try {
    if (g_host.allocator) g_host.allocator->empty_cache();
  } catch (const std::exception&) {  // nothing is released that may still be in use
  }
}

}  // namespace opd::cuda

namespace opd::native {

// Our blocks, and memory pinned by anyone else (cudaHostRegister, another library's
// cudaHostAlloc), which the driver knows as host memory.
bool is_pinned_cuda(const Tensor& self, std::optional<Device>) {
  if (!self.is_cpu()) return false;
  if (cuda::is_pinned_block(self)) return true;
  const void* data = self.storage().data();
  if (data == nullptr) return false;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, data) != cudaSuccess) {
    (void)cudaGetLastError();  // an address the driver never saw
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

namespace {
// Whether some elements of t share memory through a zero stride (an expanded tensor), which a
// copy cannot write.
bool is_expanded(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) return true;
  }
  return false;
}
}  // namespace

// A pinned copy of self with self's strides, as PyTorch's (so that empty_strided with
// pin_memory=True keeps the strides asked for); an expanded self, which PyTorch refuses, gives a
// contiguous copy.
Tensor _pin_memory_cuda(const Tensor& self, std::optional<Device>) {
  OPD_CHECK(self.is_cpu(), "cannot pin '{}' only dense CPU tensors can be pinned",
            legacy_type_name(self.scalar_type(), self.device()));
  const ScalarType dtype = self.scalar_type();
  const auto strides =
      is_expanded(self) ? factory::strides_for_memory_format(self.sizes(), MemoryFormat::Contiguous)
                        : common::DimVector(self.strides().begin(), self.strides().end());
  const IntArrayRef stride(strides.data(), strides.size());
  const size_t nbytes = factory::storage_nbytes(self.sizes(), stride, element_size(dtype));
  Tensor pinned = make_tensor(cuda::allocate_pinned_storage(nbytes), self.sizes(), stride, 0, dtype,
                              Device(DeviceType::CPU));
  pinned.copy_(self);
  return pinned;
}

// New pinned memory for the CPU factories' pin_memory=True (Note [Pinned memory]).
Tensor _opd_empty_pinned_cuda(IntArrayRef size, IntArrayRef stride, ScalarType dtype, Device) {
  factory::check_empty_strided(size, stride);
  const size_t nbytes = factory::storage_nbytes(size, stride, element_size(dtype));
  return make_tensor(cuda::allocate_pinned_storage(nbytes), size, stride, 0, dtype,
                     Device(DeviceType::CPU));
}

}  // namespace opd::native
