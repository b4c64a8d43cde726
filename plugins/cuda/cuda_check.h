#pragma once

// CUDA errors as opd::Error. Every runtime and cuBLAS call of the plugin goes through these, so
// a failure names the call and the driver's words:
//   "CUDA error: out of memory (cudaErrorMemoryAllocation) in cudaMalloc(&ptr, nbytes)"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace opd::cuda {

// "<error string> (<error name>)" for `err`.
std::string describe(cudaError_t err);

// Throws opd::Error "CUDA error: <describe(err)> in <call>" unless err is cudaSuccess. Clears
// the thread's sticky last error first, so that the next check does not report this one again.
void check(cudaError_t err, std::string_view call);
void check_cublas(cublasStatus_t status, std::string_view call);
// After a kernel launch: `err` as returned by a kern::launch_* function.
void check_launch(int err, std::string_view kernel);

}  // namespace opd::cuda

#define OPD_CUDA_CHECK(expr) ::opd::cuda::check((expr), #expr)
#define OPD_CUBLAS_CHECK(expr) ::opd::cuda::check_cublas((expr), #expr)
