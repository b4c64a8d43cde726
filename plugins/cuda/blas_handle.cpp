#include "cuda/blas_handle.h"

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "opd/error.h"

namespace opd::cuda {

namespace {

// A handle is not safe to share between threads that set different streams on it, so each
// thread has its own per device. The plugin keeps them all, to destroy them at shutdown; the
// generation tells a thread that its handles are gone.
std::mutex g_mutex;
std::vector<cublasHandle_t> g_all;
std::atomic<uint64_t> g_generation{1};

struct ThreadHandles {
  std::array<cublasHandle_t, kMaxDevices> by_device{};
  uint64_t generation = 0;
};
thread_local ThreadHandles t_handles;
}  // namespace

cublasHandle_t blas_handle(int index) {
  OPD_CHECK(index >= 0 && index < kMaxDevices, "cuBLAS: device index {} out of range", index);
  const uint64_t generation = g_generation.load(std::memory_order_acquire);
  if (t_handles.generation != generation) {
    t_handles.by_device.fill(nullptr);
    t_handles.generation = generation;
  }
  cublasHandle_t& handle = t_handles.by_device[index];
  if (handle == nullptr) {
    OPD_CUBLAS_CHECK(cublasCreate(&handle));
    std::lock_guard<std::mutex> lock(g_mutex);
    g_all.push_back(handle);
  }
  OPD_CUBLAS_CHECK(cublasSetStream(handle, current_stream(index)));
  return handle;
}

void destroy_blas_handles() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (cublasHandle_t h : g_all) (void)cublasDestroy(h);
  g_all.clear();
  g_generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace opd::cuda
