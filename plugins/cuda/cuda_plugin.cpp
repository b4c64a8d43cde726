// The CUDA plugin (libopd_cuda.so): kernels for every operator whose `dispatch:` names CUDA in
// manifests/native_functions.yaml, on the devices the driver reports. Without a usable device
// the plugin reports itself unavailable with the driver's words, and registers nothing; the
// driver is asked nothing anywhere else before that.

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "common/output.h"
#include "cuda/allocator.h"
#include "cuda/blas_handle.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/pinned.h"
#include "opd/native/CUDA.h"
#include "opd/plugin.h"

namespace {
// Kernels' new outputs, without a dispatched aten::empty (Note [Output allocation]).
opd::Tensor new_output(opd::IntArrayRef sizes, opd::ScalarType dtype, opd::Device device) {
  return opd::cuda::empty_cuda(sizes, dtype, opd::cuda::device_index(device));
}

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
