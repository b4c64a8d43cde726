#pragma once

// The bare CUDA work the GPU benchmarks compare the dispatcher against (cuda_bench_kernels.cu).
// Plain declarations: nvcc never compiles an opd header.

#include <cstdint>

namespace opd::bench {

// Queues out[i] = a[i] + b[i] for i < n (float, device pointers) on the default stream, one
// block of 128 threads per 128 elements; returns the launch's cudaError_t as int (0: success).
int launch_bare_add(const float* a, const float* b, float* out, int64_t n);

}  // namespace opd::bench
