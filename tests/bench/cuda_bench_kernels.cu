// The bare elementwise add of cuda_bench.cpp's tiny-add case: what the dispatcher's add costs
// beyond one kernel launch.

#include <cuda_runtime.h>

#include "cuda_bench_kernels.h"

namespace opd::bench {
namespace {

constexpr int kThreads = 128;

__global__ void bare_add_kernel(const float* a, const float* b, float* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

}  // namespace

int launch_bare_add(const float* a, const float* b, float* out, int64_t n) {
  if (n <= 0) return 0;
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  bare_add_kernel<<<blocks, kThreads>>>(a, b, out, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace opd::bench
