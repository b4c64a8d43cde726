#include "cuda/cuda_check.h"

#include <fmt/format.h>

#include "opd/error.h"

namespace opd::cuda {

std::string describe(cudaError_t err) {
  return fmt::format("{} ({})", cudaGetErrorString(err), cudaGetErrorName(err));
}

void check(cudaError_t err, std::string_view call) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error(fmt::format("CUDA error: {} in {}", describe(err), call));
}

void check_cublas(cublasStatus_t status, std::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(fmt::format("CUDA error: {} ({}) in {}", cublasGetStatusString(status),
                          cublasGetStatusName(status), call));
}

void check_launch(int err, std::string_view kernel) {
  if (err == 0) return;
  (void)cudaGetLastError();
  throw Error(
      fmt::format("CUDA error: {} launching {}", describe(static_cast<cudaError_t>(err)), kernel));
}

}  // namespace opd::cuda
