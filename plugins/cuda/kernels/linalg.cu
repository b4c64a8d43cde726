// The matrix-product kernels cuBLAS does not provide: a shared-memory tiled product for the
// integer types (correct for any strides, not tuned), and the scaling of the beta * self term
// when the inner dimension is empty. See linalg_args.h for the contracts.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/kernels/linalg_args.h"
#include "cuda/kernels/loops.cuh"

namespace opd::cuda::kern {
namespace {

// Threads per block edge of the tiled product: one output element per thread.
constexpr int kTile = 16;
// Largest grid along y and z.
constexpr int64_t kMaxGridYZ = 65535;

// The unsigned type an integer type multiplies in: products and sums wrap modulo 2^bits without
// the undefined behaviour of signed overflow, and truncating to T gives what T's own wrapping
// arithmetic would.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;

// One kTile x kTile tile of c per block (x along columns, y along rows, z along the batch), each
// a grid-stride loop so that any size fits the grid limits. Every thread of a block runs the
// same iterations (the bounds depend on block indices only), so the barriers are uniform.
template <class T>
__global__ void integer_matmul_kernel(int64_t batch, int64_t n, int64_t m, int64_t k,
                                      wrap_t<T> alpha, wrap_t<T> beta, const T* a, int64_t a_b,
                                      int64_t a_r, int64_t a_c, const T* bm, int64_t b_b,
                                      int64_t b_r, int64_t b_c, T* c) {
  using W = wrap_t<T>;
  __shared__ W tile_a[kTile][kTile];
  __shared__ W tile_b[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row_tiles = (n + kTile - 1) / kTile;
  const int64_t col_tiles = (m + kTile - 1) / kTile;
  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const T* ab = a + b * a_b;
    const T* bb = bm + b * b_b;
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
      for (int64_t ct = blockIdx.x; ct < col_tiles; ct += gridDim.x) {
        const int64_t i = rt * kTile + ty;
        const int64_t j = ct * kTile + tx;
        W sum = 0;
        for (int64_t p0 = 0; p0 < k; p0 += kTile) {
          const int64_t pa = p0 + tx, pb = p0 + ty;
          tile_a[ty][tx] = (i < n && pa < k) ? static_cast<W>(ab[i * a_r + pa * a_c]) : W(0);
          tile_b[ty][tx] = (pb < k && j < m) ? static_cast<W>(bb[pb * b_r + j * b_c]) : W(0);
          __syncthreads();
#pragma unroll
          for (int q = 0; q < kTile; ++q) sum += tile_a[ty][q] * tile_b[q][tx];
          __syncthreads();
        }
        if (i < n && j < m) {
          T* out = c + (b * n + i) * m + j;
          W r = alpha * sum;
          if (beta != 0) r += beta * static_cast<W>(*out);
          *out = static_cast<T>(r);
        }
      }
    }
  }
}

template <class T>
int integer_matmul(int64_t batch, int64_t n, int64_t m, int64_t k, ScalarArg alpha, MatrixArg a,
                   MatrixArg bm, ScalarArg beta, void* c, cudaStream_t stream) {
  if (batch == 0 || n == 0 || m == 0) return 0;
  using W = wrap_t<T>;
  const int64_t row_tiles = (n + kTile - 1) / kTile;
  const int64_t col_tiles = (m + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(col_tiles < INT32_MAX ? col_tiles : INT32_MAX),
                  static_cast<unsigned>(row_tiles < kMaxGridYZ ? row_tiles : kMaxGridYZ),
                  static_cast<unsigned>(batch < kMaxGridYZ ? batch : kMaxGridYZ));
  const dim3 block(kTile, kTile);
  integer_matmul_kernel<T>
      <<<grid, block, 0, stream>>>(batch, n, m, k, static_cast<W>(alpha.i), static_cast<W>(beta.i),
                                   static_cast<const T*>(a.data), a.batch_stride, a.row_stride,
                                   a.col_stride, static_cast<const T*>(bm.data), bm.batch_stride,
                                   bm.row_stride, bm.col_stride, static_cast<T*>(c));
  return static_cast<int>(cudaGetLastError());
}

// c[i] = beta * c[i] with A the arithmetic type (float for the 16-bit floats, wrap_t for the
// integers).
template <class T, class A>
__global__ void scale_kernel(T* c, int64_t numel, A beta) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += step)
    c[i] = cast_to<T>(beta * static_cast<A>(to_acc(c[i])));
}

template <class T, class A>
int scale(void* c, int64_t numel, A beta, cudaStream_t stream) {
  if (numel == 0) return 0;
  scale_kernel<T, A><<<grid_for(numel, 1), kThreads, 0, stream>>>(static_cast<T*>(c), numel, beta);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int launch_integer_matmul(Dtype dtype, int64_t batch, int64_t n, int64_t m, int64_t k,
                          ScalarArg alpha, MatrixArg a, MatrixArg bm, ScalarArg beta, void* c,
                          Stream stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case Dtype::UInt8:
      return integer_matmul<uint8_t>(batch, n, m, k, alpha, a, bm, beta, c, s);
    case Dtype::Int8:
      return integer_matmul<int8_t>(batch, n, m, k, alpha, a, bm, beta, c, s);
    case Dtype::Int16:
      return integer_matmul<int16_t>(batch, n, m, k, alpha, a, bm, beta, c, s);
    case Dtype::Int32:
      return integer_matmul<int32_t>(batch, n, m, k, alpha, a, bm, beta, c, s);
    case Dtype::Int64:
      return integer_matmul<int64_t>(batch, n, m, k, alpha, a, bm, beta, c, s);
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
}

int launch_scale(Dtype dtype, void* c, int64_t numel, ScalarArg beta, Stream stream) {
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case Dtype::UInt8:
      return scale<uint8_t>(c, numel, static_cast<wrap_t<uint8_t>>(beta.i), s);
    case Dtype::Int8:
      return scale<int8_t>(c, numel, static_cast<wrap_t<int8_t>>(beta.i), s);
    case Dtype::Int16:
      return scale<int16_t>(c, numel, static_cast<wrap_t<int16_t>>(beta.i), s);
    case Dtype::Int32:
      return scale<int32_t>(c, numel, static_cast<wrap_t<int32_t>>(beta.i), s);
    case Dtype::Int64:
      return scale<int64_t>(c, numel, static_cast<wrap_t<int64_t>>(beta.i), s);
    case Dtype::Float16:
      return scale<__half>(c, numel, static_cast<float>(beta.f), s);
    case Dtype::BFloat16:
      return scale<__nv_bfloat16>(c, numel, static_cast<float>(beta.f), s);
    case Dtype::Float32:
      return scale<float>(c, numel, static_cast<float>(beta.f), s);
    case Dtype::Float64:
      return scale<double>(c, numel, beta.f, s);
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace opd::cuda::kern
