#pragma once

// The reduction kernel family over a contiguous [outer, size, inner] input (see
// kernels/reduce_args.h), shared by reduce.cu (sum, mean, amax, amin) and arg_reduce.cu (argmax,
// max.dim). Four kernels cover the shapes:
//   per_thread  one thread per output, for at most kPerThreadMax elements each;
//   warp_rows   inner == 1: one warp per row of at most kWarpRowMax elements;
//   block_rows  inner == 1: one block per row (or piece of a row), 16-byte vector loads;
//   columns     inner > 1: blocks of (bx, by) threads, bx neighbouring outputs side by side so
//               that loads coalesce, by threads down the reduced dim of each.
// When the outputs are too few to fill the device (a full sum, a sum over the rows of a narrow
// matrix), block_rows and columns split the reduced dim into pieces and write one partial result
// per piece into the workspace; a second, `columns` launch combines them.
//
// An Op over elements in_t provides
//   acc_type                     a plain struct or number, the running state of one output
//   identity()                   the state before any element
//   load(v, r)                   element r (its position along `size`) of its output
//   combine(a, b)                commutative: pieces combine in any order
//   shfl_down(a, offset)         a warp shuffle of acc_type
//   write(o, a)                  the result of output o
// Every combine is commutative, argmax's included (the larger value wins, NaN beats any number,
// equal values keep the smaller index), so any order of combination returns the CPU's answer.

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuda/kernels/loops.cuh"
#include "cuda/kernels/reduce_args.h"

namespace opd::cuda::kern::reduction {

inline constexpr unsigned kFullMask = 0xffffffffu;
// per_thread, warp_rows and columns run kThreads (loops.cuh) threads a block.
inline constexpr int kRowThreads = 512;  // block_rows
inline constexpr int64_t kPerThreadMax = 16;
inline constexpr int64_t kWarpRowMax = 1024;
inline constexpr int64_t kMinRowPiece = kRowThreads * 8;  // elements per block_rows piece, at least
inline constexpr int64_t kMinColumnRun = 16;              // elements per columns thread, at least
inline constexpr int64_t kMaxGridY = 65535;
inline constexpr int64_t kMaxBlocks = int64_t{1} << 30;

// ---- element helpers ----------------------------------------------------------------------------

// What amax, amin and argmax compare T as (exactly T's values; int for the small integers, which
// the warp shuffles do not take).
template <class T>
using cmp_acc_t =
    std::conditional_t<kIsFloat<T>, acc_t<T>, std::conditional_t<(sizeof(T) < 4), int, T>>;

template <class A>
__device__ __forceinline__ bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return v != v;
  else
    return false;
}

template <class A>
__device__ __forceinline__ A lowest() {
  if constexpr (std::is_floating_point_v<A>)
    return -std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::lowest();
}

template <class A>
__device__ __forceinline__ A highest() {
  if constexpr (std::is_floating_point_v<A>)
    return std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::max();
}

// ---- kernels ------------------------------------------------------------------------------------

__host__ __device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

template <class Op>
__device__ __forceinline__ typename Op::acc_type warp_reduce(const Op& op,
                                                             typename Op::acc_type v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op.combine(v, op.shfl_down(v, offset));
  return v;
}

// The combination of every thread's `v`, in thread 0. Every thread of the (1-D) block calls it.
template <class Op>
__device__ typename Op::acc_type block_reduce(const Op& op, typename Op::acc_type v) {
  using Acc = typename Op::acc_type;
  __shared__ Acc warp_results[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_reduce(op, v);
  __syncthreads();  // warp_results may still be read by a previous call
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? warp_results[lane] : op.identity();
    v = warp_reduce(op, v);
  }
  return v;
}

// Folds elements [begin, end) of row p into acc, the block's threads taking turns: a scalar head
// up to the first 16-byte boundary, then 16-byte vectors, four in flight per thread, then a tail.
template <class Op>
__device__ typename Op::acc_type fold_row(const Op& op, const typename Op::in_t* __restrict__ p,
                                          int64_t begin, int64_t end, typename Op::acc_type acc) {
  using T = typename Op::in_t;
  constexpr int kLanes = 16 / sizeof(T);
  using V = Vec<T, kLanes>;
  constexpr int kUnroll = 4;
  const int64_t tid = threadIdx.x, nt = blockDim.x;
  const auto misalign = reinterpret_cast<uintptr_t>(p + begin) % 16;
  const int64_t head = min64(end - begin, static_cast<int64_t>((16 - misalign) % 16 / sizeof(T)));
  if (tid < head) acc = op.combine(acc, op.load(p[begin + tid], begin + tid));
  const int64_t vbegin = begin + head;
  const int64_t nvec = (end - vbegin) / kLanes;
  const V* vp = reinterpret_cast<const V*>(p + vbegin);
  int64_t k = tid;
  for (; k + (kUnroll - 1) * nt < nvec; k += kUnroll * nt) {
    V v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = vp[k + u * nt];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t r = vbegin + (k + u * nt) * kLanes;
#pragma unroll
      for (int e = 0; e < kLanes; ++e) acc = op.combine(acc, op.load(v[u].v[e], r + e));
    }
  }
  for (; k < nvec; k += nt) {
    const V v = vp[k];
    const int64_t r = vbegin + k * kLanes;
#pragma unroll
    for (int e = 0; e < kLanes; ++e) acc = op.combine(acc, op.load(v.v[e], r + e));
  }
  const int64_t tail = vbegin + nvec * kLanes;
  if (tail + tid < end) acc = op.combine(acc, op.load(p[tail + tid], tail + tid));
  return acc;
}

// One thread per output, any inner.
template <class Op>
__global__ void __launch_bounds__(kThreads)
    per_thread(Op op, const typename Op::in_t* __restrict__ in, int64_t outer, int64_t size,
               int64_t inner) {
  const int64_t n = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t o = i / inner, j = i - o * inner;
    const typename Op::in_t* p = in + o * size * inner + j;
    typename Op::acc_type acc = op.identity();
    for (int64_t r = 0; r < size; ++r) acc = op.combine(acc, op.load(p[r * inner], r));
    op.write(i, acc);
  }
}

// One warp per row (inner == 1).
template <class Op>
__global__ void __launch_bounds__(kThreads)
    warp_rows(Op op, const typename Op::in_t* __restrict__ in, int64_t rows, int64_t size) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = blockDim.x / 32;
  for (int64_t row = blockIdx.x * warps + threadIdx.x / 32; row < rows; row += gridDim.x * warps) {
    const typename Op::in_t* p = in + row * size;
    typename Op::acc_type acc = op.identity();
    for (int64_t r = lane; r < size; r += 32) acc = op.combine(acc, op.load(p[r], r));
    acc = warp_reduce(op, acc);
    if (lane == 0) op.write(row, acc);
  }
}

// One block per row piece (inner == 1): piece blockIdx.y of `chunk` elements. kFinal writes the
// result, else partial[row * gridDim.y + piece].
template <class Op, bool kFinal>
__global__ void __launch_bounds__(kRowThreads)
    block_rows(Op op, const typename Op::in_t* __restrict__ in, int64_t rows, int64_t size,
               int64_t chunk, typename Op::acc_type* __restrict__ partial) {
  const int64_t begin = blockIdx.y * chunk, end = min64(size, begin + chunk);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    typename Op::acc_type acc = fold_row(op, in + row * size, begin, end, op.identity());
    acc = block_reduce(op, acc);
    if (threadIdx.x == 0) {
      if constexpr (kFinal)
        op.write(row, acc);
      else
        partial[row * gridDim.y + blockIdx.y] = acc;
    }
  }
}

// Outputs (o, j), j = blockIdx.x * bx + threadIdx.x, over piece blockIdx.z of `chunk` elements;
// blockDim.y (a power of two) threads down each, combined through dynamic shared memory of
// blockDim.x * blockDim.y acc_type. Reads Op::in_t elements, or (kSrcAcc) partial results.
// kFinal writes the result, else partial[(o * gridDim.z + piece) * inner + j].
template <class Op, bool kSrcAcc, bool kFinal>
__global__ void __launch_bounds__(kThreads) columns(
    Op op,
    const std::conditional_t<kSrcAcc, typename Op::acc_type, typename Op::in_t>* __restrict__ in,
    int64_t outer, int64_t size, int64_t inner, int64_t chunk,
    typename Op::acc_type* __restrict__ partial) {
  using Acc = typename Op::acc_type;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* smem = reinterpret_cast<Acc*>(smem_raw);
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const int64_t j = blockIdx.x * int64_t{bx} + tx;
  const int64_t begin = blockIdx.z * chunk, end = min64(size, begin + chunk);
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    Acc acc = op.identity();
    if (j < inner) {
      const auto* p = in + o * size * inner + j;
      for (int64_t r = begin + ty; r < end; r += by) {
        if constexpr (kSrcAcc)
          acc = op.combine(acc, p[r * inner]);
        else
          acc = op.combine(acc, op.load(p[r * inner], r));
      }
    }
    smem[ty * bx + tx] = acc;
    __syncthreads();
    for (int stride = by / 2; stride > 0; stride >>= 1) {
      if (ty < stride)
        smem[ty * bx + tx] = op.combine(smem[ty * bx + tx], smem[(ty + stride) * bx + tx]);
      __syncthreads();
    }
    if (ty == 0 && j < inner) {
      if constexpr (kFinal)
        op.write(o * inner + j, smem[tx]);
      else
        partial[(o * gridDim.z + blockIdx.z) * inner + j] = smem[tx];
    }
    __syncthreads();
  }
}

// ---- launch plan --------------------------------------------------------------------------------

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

inline int64_t clamp_min1(int64_t v) { return v < 1 ? 1 : v; }

// The current device's multiprocessors, asked once per device.
inline int sm_count() {
  static std::atomic<int> counts[64];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) {
    (void)cudaGetLastError();
    return 132;
  }
  int n = counts[device].load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        n <= 0) {
      (void)cudaGetLastError();
      n = 132;
    }
    counts[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

enum class Kind { PerThread, WarpRows, BlockRows, Columns };

struct Plan {
  Kind kind = Kind::PerThread;
  dim3 grid, block;
  size_t smem = 0;
  int64_t splits = 1;  // pieces of the reduced dim; > 1: a second launch combines them
  int64_t chunk = 0;   // elements per piece
  dim3 grid2, block2;  // the combining launch
  size_t smem2 = 0;
};

// A (bx, by) block of at most kThreads threads, both powers of two: bx outputs side by side,
// by threads down the `size` elements of each.
inline void column_block(int64_t inner, int64_t size, int64_t* bx, int64_t* by) {
  *bx = pow2_ceil(inner) < 32 ? pow2_ceil(inner) : 32;
  *by = pow2_ceil(size) < kThreads / *bx ? pow2_ceil(size) : kThreads / *bx;
  if (*bx * *by < kThreads && *bx < pow2_ceil(inner))
    *bx = pow2_ceil(inner) < kThreads / *by ? pow2_ceil(inner) : kThreads / *by;
}

// Blocks of kKernel resident on one multiprocessor at `threads` threads and `smem` bytes of
// dynamic shared memory; asked once per kernel (1 when the runtime cannot tell).
template <auto kKernel>
int64_t resident_blocks(int threads, size_t smem) {
  static std::atomic<int> cached{0};
  int n = cached.load(std::memory_order_relaxed);
  if (n == 0) {
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kKernel, threads, smem) != cudaSuccess ||
        n < 1) {
      (void)cudaGetLastError();
      n = 1;
    }
    cached.store(n, std::memory_order_relaxed);
  }
  return n;
}

// How `a` runs with an accumulator of acc_size bytes, given how many blocks of block_rows
// (row_resident) and columns (column_resident) one multiprocessor holds: split pieces aim at one
// full wave. A pure function of its arguments and the current device, so that workspace_bytes
// and run agree.
inline Plan make_plan(const ReduceArgs& a, size_t acc_size, int64_t row_resident,
                      int64_t column_resident) {
  Plan p;
  const int64_t outputs = a.outer * a.inner;
  if (a.size <= kPerThreadMax) {
    p.kind = Kind::PerThread;
    p.block = dim3(kThreads);
    p.grid = dim3(static_cast<unsigned>(min64(ceil_div(outputs, kThreads), kMaxBlocks)));
    return p;
  }
  if (a.inner == 1 && a.size <= kWarpRowMax) {
    p.kind = Kind::WarpRows;
    p.block = dim3(kThreads);
    p.grid = dim3(static_cast<unsigned>(min64(ceil_div(a.outer, kThreads / 32), kMaxBlocks)));
    return p;
  }
  const int64_t sms = sm_count();
  if (a.inner == 1) {
    p.kind = Kind::BlockRows;
    const int64_t target = sms * row_resident;
    if (a.outer < target)
      p.splits = clamp_min1(min64(ceil_div(target, a.outer), a.size / kMinRowPiece));
    // Pieces of a multiple of 16 elements keep each piece's 16-byte alignment that of its row.
    p.chunk = ceil_div(ceil_div(a.size, p.splits), 16) * 16;
    p.splits = ceil_div(a.size, p.chunk);
    p.block = dim3(kRowThreads);
    p.grid =
        dim3(static_cast<unsigned>(min64(a.outer, kMaxBlocks)), static_cast<unsigned>(p.splits));
  } else {
    p.kind = Kind::Columns;
    int64_t bx = 0, by = 0;
    column_block(a.inner, a.size, &bx, &by);
    const int64_t blocks = ceil_div(a.inner, bx) * a.outer;
    const int64_t target = sms * column_resident;
    if (blocks < target)
      p.splits = clamp_min1(min64(ceil_div(target, blocks), a.size / (by * kMinColumnRun)));
    p.chunk = ceil_div(a.size, p.splits);
    p.splits = ceil_div(a.size, p.chunk);
    p.block = dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
    p.grid =
        dim3(static_cast<unsigned>(ceil_div(a.inner, bx)),
             static_cast<unsigned>(min64(a.outer, kMaxGridY)), static_cast<unsigned>(p.splits));
    p.smem = static_cast<size_t>(bx * by) * acc_size;
  }
  if (p.splits > 1) {
    int64_t bx = 0, by = 0;
    column_block(a.inner, p.splits, &bx, &by);
    p.block2 = dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
    p.grid2 = dim3(static_cast<unsigned>(ceil_div(a.inner, bx)),
                   static_cast<unsigned>(min64(a.outer, kMaxGridY)), 1);
    p.smem2 = static_cast<size_t>(bx * by) * acc_size;
  }
  return p;
}

template <class Op>
Plan plan_for(const ReduceArgs& a) {
  using Acc = typename Op::acc_type;
  return make_plan(a, sizeof(Acc), resident_blocks<&block_rows<Op, false>>(kRowThreads, 0),
                   resident_blocks<&columns<Op, false, false>>(kThreads, kThreads * sizeof(Acc)));
}

// The workspace bytes run(op, a, ...) needs.
template <class Op>
int64_t workspace_bytes(const Op&, const ReduceArgs& a) {
  const Plan p = plan_for<Op>(a);
  if (p.splits == 1) return 0;
  return a.outer * p.splits * a.inner * static_cast<int64_t>(sizeof(typename Op::acc_type));
}

// Queues `op` over `a` (in a.in, workspace a.workspace) on `stream`; returns the launch's error.
template <class Op>
int run(const Op& op, const ReduceArgs& a, Stream stream) {
  using T = typename Op::in_t;
  using Acc = typename Op::acc_type;
  const Plan p = plan_for<Op>(a);
  const auto s = static_cast<cudaStream_t>(stream);
  const T* in = static_cast<const T*>(a.in);
  Acc* ws = static_cast<Acc*>(a.workspace);
  if (p.splits > 1 && ws == nullptr) return static_cast<int>(cudaErrorInvalidValue);
  switch (p.kind) {
    case Kind::PerThread:
      per_thread<<<p.grid, p.block, 0, s>>>(op, in, a.outer, a.size, a.inner);
      break;
    case Kind::WarpRows:
      warp_rows<<<p.grid, p.block, 0, s>>>(op, in, a.outer, a.size);
      break;
    case Kind::BlockRows:
      if (p.splits == 1)
        block_rows<Op, true><<<p.grid, p.block, 0, s>>>(op, in, a.outer, a.size, p.chunk, nullptr);
      else
        block_rows<Op, false><<<p.grid, p.block, 0, s>>>(op, in, a.outer, a.size, p.chunk, ws);
      break;
    case Kind::Columns:
      if (p.splits == 1)
        columns<Op, false, true>
            <<<p.grid, p.block, p.smem, s>>>(op, in, a.outer, a.size, a.inner, p.chunk, nullptr);
      else
        columns<Op, false, false>
            <<<p.grid, p.block, p.smem, s>>>(op, in, a.outer, a.size, a.inner, p.chunk, ws);
      break;
  }
  if (p.splits > 1) {
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return static_cast<int>(err);
    columns<Op, true, true>
        <<<p.grid2, p.block2, p.smem2, s>>>(op, ws, a.outer, p.splits, a.inner, p.splits, nullptr);
  }
  return static_cast<int>(cudaGetLastError());
}

// ArgMax's half of reduce_workspace_bytes and launch_reduce (arg_reduce.cu), same contracts.
// REQUIRES: args.op == ReduceOp::ArgMax, outer * inner > 0.
int64_t arg_max_workspace_bytes(const ReduceArgs& args);
int launch_arg_max(const ReduceArgs& args, Stream stream);

}  // namespace opd::cuda::kern::reduction
