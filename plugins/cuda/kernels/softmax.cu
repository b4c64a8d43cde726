// Device code of _softmax, _log_softmax and their backward (see kernels/nn_args.h). Contiguous
// lanes (inner == 1) go one per warp when short and one per block when long; strided lanes
// (inner > 1) one per thread, neighbouring threads on neighbouring lanes so that loads coalesce.
// Each lane is read two or three times (maximum, sum, result); the later passes mostly hit cache.
// The arithmetic follows the CPU kernel: y = exp(x - max) * (1 / sum) and
// log y = (x - max) - log(sum), in float (double for Float64).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuda/kernels/loops.cuh"
#include "cuda/kernels/nn_args.h"

namespace opd::cuda::kern {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
// Warp lanes and strided lanes run kThreads (loops.cuh) threads a block.
constexpr int kRowThreads = 512;  // one block per lane
constexpr int64_t kWarpLaneMax = 1024;
constexpr int64_t kMaxBlocks = int64_t{1} << 30;

__device__ __forceinline__ float dev_exp(float v) { return expf(v); }
__device__ __forceinline__ double dev_exp(double v) { return exp(v); }
__device__ __forceinline__ float dev_log(float v) { return logf(v); }
__device__ __forceinline__ double dev_log(double v) { return log(v); }

// The larger, NaN winning (the CPU's `if (v > max || isnan(v)) max = v`).
struct MaxF {
  template <class C>
  __device__ C operator()(C a, C b) const {
    if (a != a) return a;
    if (b != b) return b;
    return a > b ? a : b;
  }
};

struct SumF {
  template <class C>
  __device__ C operator()(C a, C b) const {
    return a + b;
  }
};

// Combines v over the warp (kWarp) or the whole block (through smem, 32 values); every thread
// gets the same result. In block mode every thread of the block calls it.
template <bool kWarp, class C, class F>
__device__ C allreduce(C v, F f, C* smem) {
  for (int offset = 16; offset > 0; offset >>= 1) v = f(v, __shfl_xor_sync(kFullMask, v, offset));
  if constexpr (kWarp) {
    return v;
  } else {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    __syncthreads();  // smem may still be read by a previous call
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = smem[0];
    for (int w = 1; w < warps; ++w) v = f(v, smem[w]);
    return v;
  }
}

// The lanes a thread group works on: a warp (kWarp) or the whole block, `width` threads.
template <bool kWarp>
struct Group {
  int64_t first, step;
  int lane, width;
  __device__ Group() {
    const int64_t per_block = kWarp ? blockDim.x / 32 : 1;
    first = blockIdx.x * per_block + (kWarp ? threadIdx.x / 32 : 0);
    step = gridDim.x * per_block;
    lane = kWarp ? threadIdx.x % 32 : threadIdx.x;
    width = kWarp ? 32 : blockDim.x;
  }
};

template <bool kWarp, class T, class O, bool kLog>
__global__ void __launch_bounds__(kRowThreads)
    softmax_rows(const T* __restrict__ x, O* __restrict__ y, int64_t rows, int64_t n) {
  using C = acc_t<T>;
  __shared__ C smem[32];
  const Group<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* xr = x + row * n;
    O* yr = y + row * n;
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t k = g.lane; k < n; k += g.width) mx = MaxF()(mx, to_acc(xr[k]));
    mx = allreduce<kWarp>(mx, MaxF(), smem);
    C sum = 0;
    for (int64_t k = g.lane; k < n; k += g.width) sum += dev_exp(to_acc(xr[k]) - mx);
    sum = allreduce<kWarp>(sum, SumF(), smem);
    const C scale = kLog ? dev_log(sum) : C(1) / sum;
    for (int64_t k = g.lane; k < n; k += g.width) {
      const C v = to_acc(xr[k]) - mx;
      yr[k] = cast_to<O>(kLog ? v - scale : dev_exp(v) * scale);
    }
  }
}

template <class T, class O, bool kLog>
__global__ void __launch_bounds__(kThreads)
    softmax_strided(const T* __restrict__ x, O* __restrict__ y, int64_t outer, int64_t n,
                    int64_t inner) {
  using C = acc_t<T>;
  const int64_t lanes = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lanes;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t o = i / inner;
    const int64_t base = o * n * inner + (i - o * inner);
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t k = 0; k < n; ++k) mx = MaxF()(mx, to_acc(x[base + k * inner]));
    C sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += dev_exp(to_acc(x[base + k * inner]) - mx);
    const C scale = kLog ? dev_log(sum) : C(1) / sum;
    for (int64_t k = 0; k < n; ++k) {
      const C v = to_acc(x[base + k * inner]) - mx;
      y[base + k * inner] = cast_to<O>(kLog ? v - scale : dev_exp(v) * scale);
    }
  }
}

// One element of the backward: g, y and the lane's sum s (of g * y, or for log of g).
template <bool kLog, class C>
__device__ __forceinline__ C backward_element(C g, C y, C s) {
  return kLog ? g - dev_exp(y) * s : y * (g - s);
}

template <bool kWarp, class T, class O, bool kLog>
__global__ void __launch_bounds__(kRowThreads)
    softmax_backward_rows(const T* __restrict__ grad, const T* __restrict__ out,
                          O* __restrict__ grad_input, int64_t rows, int64_t n) {
  using C = acc_t<T>;
  __shared__ C smem[32];
  const Group<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* gr = grad + row * n;
    const T* yr = out + row * n;
    O* gir = grad_input + row * n;
    C s = 0;
    for (int64_t k = g.lane; k < n; k += g.width)
      s += kLog ? to_acc(gr[k]) : to_acc(gr[k]) * to_acc(yr[k]);
    s = allreduce<kWarp>(s, SumF(), smem);
    for (int64_t k = g.lane; k < n; k += g.width)
      gir[k] = cast_to<O>(backward_element<kLog>(to_acc(gr[k]), to_acc(yr[k]), s));
  }
}

template <class T, class O, bool kLog>
__global__ void __launch_bounds__(kThreads)
    softmax_backward_strided(const T* __restrict__ grad, const T* __restrict__ out,
                             O* __restrict__ grad_input, int64_t outer, int64_t n, int64_t inner) {
  using C = acc_t<T>;
  const int64_t lanes = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lanes;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t o = i / inner;
    const int64_t base = o * n * inner + (i - o * inner);
    C s = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = base + k * inner;
      s += kLog ? to_acc(grad[at]) : to_acc(grad[at]) * to_acc(out[at]);
    }
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = base + k * inner;
      grad_input[at] = cast_to<O>(backward_element<kLog>(to_acc(grad[at]), to_acc(out[at]), s));
    }
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

unsigned blocks(int64_t n) { return static_cast<unsigned>(n < kMaxBlocks ? n : kMaxBlocks); }

template <class T, class O, bool kLog>
void forward(const SoftmaxArgs& a, cudaStream_t s) {
  const T* x = static_cast<const T*>(a.input);
  O* y = static_cast<O*>(a.output);
  if (a.inner > 1) {
    softmax_strided<T, O, kLog><<<blocks(ceil_div(a.outer * a.inner, kThreads)), kThreads, 0, s>>>(
        x, y, a.outer, a.dim_size, a.inner);
  } else if (a.dim_size <= kWarpLaneMax) {
    softmax_rows<true, T, O, kLog>
        <<<blocks(ceil_div(a.outer, kThreads / 32)), kThreads, 0, s>>>(x, y, a.outer, a.dim_size);
  } else {
    softmax_rows<false, T, O, kLog>
        <<<blocks(a.outer), kRowThreads, 0, s>>>(x, y, a.outer, a.dim_size);
  }
}

template <class T, class O, bool kLog>
void backward(const SoftmaxBackwardArgs& a, cudaStream_t s) {
  const T* g = static_cast<const T*>(a.grad_output);
  const T* y = static_cast<const T*>(a.output);
  O* gi = static_cast<O*>(a.grad_input);
  if (a.inner > 1) {
    softmax_backward_strided<T, O, kLog>
        <<<blocks(ceil_div(a.outer * a.inner, kThreads)), kThreads, 0, s>>>(g, y, gi, a.outer,
                                                                            a.dim_size, a.inner);
  } else if (a.dim_size <= kWarpLaneMax) {
    softmax_backward_rows<true, T, O, kLog>
        <<<blocks(ceil_div(a.outer, kThreads / 32)), kThreads, 0, s>>>(g, y, gi, a.outer,
                                                                       a.dim_size);
  } else {
    softmax_backward_rows<false, T, O, kLog>
        <<<blocks(a.outer), kRowThreads, 0, s>>>(g, y, gi, a.outer, a.dim_size);
  }
}

// Returns run(T{}, T{}) for a floating `dtype` T; cudaErrorInvalidValue, run not called, for
// another.
template <class Run>
int visit_floating(Dtype dtype, Run&& run) {
  return visit(dtype, [&](auto t) -> int {
    if constexpr (kIsFloat<decltype(t)>)
      return run(t, t);
    else
      return static_cast<int>(cudaErrorInvalidValue);
  });
}

}  // namespace

int launch_softmax(const SoftmaxArgs& args, Stream stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  auto run = [&](auto in, auto out) {
    using T = decltype(in);
    using O = decltype(out);
    if (args.log)
      forward<T, O, true>(args, s);
    else
      forward<T, O, false>(args, s);
    return static_cast<int>(cudaGetLastError());
  };
  if (args.out_dtype == args.dtype) return visit_floating(args.dtype, run);
  if (args.dtype == Dtype::Float16 && args.out_dtype == Dtype::Float32)
    return run(__half{}, float{});
  return static_cast<int>(cudaErrorInvalidValue);
}

int launch_softmax_backward(const SoftmaxBackwardArgs& args, Stream stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  auto run = [&](auto in, auto out) {
    using T = decltype(in);
    using O = decltype(out);
    if (args.log)
      backward<T, O, true>(args, s);
    else
      backward<T, O, false>(args, s);
    return static_cast<int>(cudaGetLastError());
  };
  if (args.out_dtype == args.dtype) return visit_floating(args.dtype, run);
  if (args.dtype == Dtype::Float32 && args.out_dtype == Dtype::Float16)
    return run(float{}, __half{});
  return static_cast<int>(cudaErrorInvalidValue);
}

}  // namespace opd::cuda::kern
