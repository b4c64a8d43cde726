#pragma once

// What the host side of the reductions (reduce_kernels.cpp) hands their device code
// (kernels/reduce.cu, and kernels/arg_reduce.cu for ArgMax, both on kernels/reduce.cuh).
// Conventions as kernels/kernel_args.h: no opd header, raw pointers, launch functions that return
// the CUDA error of the launch.
//
// Every reduction arrives as a contiguous [outer, size, inner] input reduced over its middle dim:
// output o * inner + j combines the `size` elements (o * size + r) * inner + j, r = 0, 1, ...,
// and r is the index argmax reports. The host permutes and copies the input into that form when
// the reduced dims are not one block already.

#include <cstdint>

#include "cuda/kernels/kernel_args.h"

namespace opd::cuda::kern {

enum class ReduceOp : int8_t {
  Sum,
  Mean,    // the sum divided by `size`; floating and complex types only
  Max,     // amax: NaN wins; real types only (also Min and ArgMax)
  Min,     // amin: NaN wins
  ArgMax,  // the first largest element (the first NaN if any) and its r
};

struct ReduceArgs {
  ReduceOp op = ReduceOp::Sum;
  // Sum: out_dtype == in_dtype, or Int64 for an integral or Bool input. Mean: out_dtype ==
  // in_dtype, floating. Max, Min, ArgMax: out_dtype == in_dtype (ArgMax: that of `out`).
  Dtype in_dtype = Dtype::Float32;
  Dtype out_dtype = Dtype::Float32;
  const void* in = nullptr;  // may be null when size == 0
  int64_t outer = 1, size = 1, inner = 1;
  void* out = nullptr;         // outer * inner results, contiguous; ArgMax: values, or null
  int64_t* indices = nullptr;  // ArgMax only: outer * inner indices, contiguous
  void* workspace = nullptr;   // reduce_workspace_bytes(*this) bytes of device memory
};

// The bytes of device scratch launch_reduce needs for `args` on the current device (0: none).
// The caller allocates them on the stream of the launch.
int64_t reduce_workspace_bytes(const ReduceArgs& args);

// Queues the reduction on `stream`. REQUIRES: outer * inner > 0, the workspace in place, the
// dtypes as above (another combination returns cudaErrorInvalidValue and launches nothing).
int launch_reduce(const ReduceArgs& args, Stream stream);

}  // namespace opd::cuda::kern
