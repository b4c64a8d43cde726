// The CUDA plugin (libopd_cuda.so): kernels for every operator whose `dispatch:` names CUDA in
// manifests/native_functions.yaml, on the devices the driver reports. Without a usable device
// the plugin reports itself unavailable with the driver's words, and registers nothing; the
// driver is asked nothing anywhere else before that. With one, it also registers the CPU fallback
// for the operators it has no kernel of, and its device guard.

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/output.h"
#include "cuda/allocator.h"
#include "cuda/blas_handle.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/pinned.h"
#include "opd/cpu_fallback.h"
#include "opd/device_guard.h"
#include "opd/native/CUDA.h"
#include "opd/plugin.h"

namespace {
// Kernels' new outputs, without a dispatched aten::empty (Note [Output allocation]).
opd::Tensor new_output(opd::IntArrayRef sizes, opd::ScalarType dtype, opd::Device device) {
  return opd::cuda::empty_cuda(sizes, dtype, opd::cuda::device_index(device));
}

// The plugin's current device as the core's device guard (opd/device_guard.h, Note [Device
// guards]): "cuda" without an index means the calling thread's current CUDA device.
struct CudaGuardImpl final : opd::DeviceGuardImpl {
  int8_t current_device() const override {
    return static_cast<int8_t>(opd::cuda::current_device());
  }
  void set_device(int8_t index) const override {
    // Validates the index with the plugin's message, then makes it current.
    const int checked = opd::cuda::device_index(opd::Device(opd::DeviceType::CUDA, index));
    OPD_CUDA_CHECK(cudaSetDevice(checked));
  }
  // A restore (as the plugin's own DeviceGuard): a failure leaves the device as it is.
  void unchecked_set_device(int8_t index) const noexcept override {
    if (cudaSetDevice(index) != cudaSuccess) (void)cudaGetLastError();
  }
  int8_t device_count() const noexcept override {
    return static_cast<int8_t>(opd::cuda::device_count());
  }
};

void shutdown_cuda() noexcept {
  opd::cuda::destroy_blas_handles();
  opd::cuda::empty_all_caches();
  opd::cuda::empty_host_cache();
}
}  // namespace

OPD_PLUGIN(cuda, "0.1.0") {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    opd::plugin_unavailable(fmt::format("cudaGetDeviceCount failed: {}", opd::cuda::describe(err)));
  }
  if (count == 0) opd::plugin_unavailable("cudaGetDeviceCount found no CUDA device");
  opd::cuda::set_device_count(count);
  opd::on_plugin_shutdown(&shutdown_cuda);
  opd::common::set_output_allocator(opd::DeviceType::CUDA, &new_output);
}

OPD_LIBRARY_IMPL(aten, CUDA, m) { opd::native::register_CUDA_kernels(m); }

// Every operator the CPU plugin has runs on CUDA tensors: the plugin's own kernels win, the rest
// falls back to the CPU with torch's warning once per operator (Note [CPU fallback]).
OPD_LIBRARY_IMPL(_, CUDA, m) {
  m.fallback(&opd::cpu_fallback);
  m.device_guard(opd::make_device_guard<CudaGuardImpl>());
}
