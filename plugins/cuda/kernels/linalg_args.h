#pragma once

// The device side of the matrix products (mm, bmm, addmm) that cuBLAS does not cover: integer
// products, and the beta * self term alone when the inner dimension is empty. Plain declarations
// for the host code (see kernel_args.h for the conventions); kernels/linalg.cu defines them.

#include <cstdint>

#include "cuda/kernels/kernel_args.h"

namespace opd::cuda::kern {

// A [batch, rows, cols] matrix operand: its first element and its element strides (batch_stride
// 0 for a plain matrix). Any non-negative strides are read, overlapping ones included.
struct MatrixArg {
  const void* data = nullptr;
  int64_t batch_stride = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// c[b] = alpha * (a[b] @ bm[b]) + beta * c[b] for b < batch, with a [batch, n, k], bm
// [batch, k, m] and c a dense [batch, n, m] of elements `dtype`. c is not read when beta.i is 0.
// Arithmetic wraps modulo 2^bits, as the CPU's loops do, so the result does not depend on the
// order of the sums. REQUIRES: dtype is UInt8, Int8, Int16, Int32 or Int64 (else
// cudaErrorInvalidValue, nothing launched); alpha.i and beta.i hold the values already converted
// to `dtype` and back.
int launch_integer_matmul(Dtype dtype, int64_t batch, int64_t n, int64_t m, int64_t k,
                          ScalarArg alpha, MatrixArg a, MatrixArg bm, ScalarArg beta, void* c,
                          Stream stream);

// c[i] = beta * c[i] for the numel dense elements of c, in the arithmetic of `dtype` (float for
// Float16 and BFloat16, wrapping for the integers; beta.f for the floating types, beta.i for the
// integers). REQUIRES: dtype is not Bool (else cudaErrorInvalidValue, nothing launched).
int launch_scale(Dtype dtype, void* c, int64_t numel, ScalarArg beta, Stream stream);

}  // namespace opd::cuda::kern
