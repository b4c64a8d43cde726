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

#include "cuda/kernels/nn_args.h"

namespace opd::cuda::kern {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kThreads = 256;     // warp lanes and strided lanes
constexpr int kRowThreads = 512;  // one block per lane
constexpr int64_t kWarpLaneMax = 1024;
constexpr int64_t kMaxBlocks = int64_t{1} << 30;

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the floating type T of `d`; false for another dtype.
template <class F>
bool visit_floating(Dtype d, F&& f) {
  switch (d) {
    case Dtype::Float16:
      f(Tag<__half>{});
      return true;
    case Dtype::BFloat16:
      f(Tag<__nv_bfloat16>{});
      return true;
    case Dtype::Float32:
      f(Tag<float>{});
      return true;
    case Dtype::Float64:
      f(Tag<double>{});
      return true;
    default:
      return false;
  }
}

template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class C, class T>
__device__ __forceinline__ C to_c(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return static_cast<C>(v);
}

template <class O, class C>
__device__ __forceinline__ O from_c(C v) {
  if constexpr (std::is_same_v<O, __half>)
    return __float2half(static_cast<float>(v));
  else if constexpr (std::is_same_v<O, __nv_bfloat16>)
    return __float2bfloat16(static_cast<float>(v));
  else
    return static_cast<O>(v);
}

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
  using C = compute_t<T>;
  __shared__ C smem[32];
  const Group<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* xr = x + row * n;
    O* yr = y + row * n;
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t k = g.lane; k < n; k += g.width) mx = MaxF()(mx, to_c<C>(xr[k]));
    mx = allreduce<kWarp>(mx, MaxF(), smem);
    C sum = 0;
    for (int64_t k = g.lane; k < n; k += g.width) sum += dev_exp(to_c<C>(xr[k]) - mx);
    sum = allreduce<kWarp>(sum, SumF(), smem);
    const C scale = kLog ? dev_log(sum) : C(1) / sum;
    for (int64_t k = g.lane; k < n; k += g.width) {
      const C v = to_c<C>(xr[k]) - mx;
      yr[k] = from_c<O>(kLog ? v - scale : dev_exp(v) * scale);
    }
  }
}

template <class T, class O, bool kLog>
__global__ void __launch_bounds__(kThreads)
    softmax_strided(const T* __restrict__ x, O* __restrict__ y, int64_t outer, int64_t n,
                    int64_t inner) {
  using C = compute_t<T>;
  const int64_t lanes = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lanes;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t o = i / inner;
    const int64_t base = o * n * inner + (i - o * inner);
    C mx = -std::numeric_limits<C>::infinity();
    for (int64_t k = 0; k < n; ++k) mx = MaxF()(mx, to_c<C>(x[base + k * inner]));
    C sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += dev_exp(to_c<C>(x[base + k * inner]) - mx);
    const C scale = kLog ? dev_log(sum) : C(1) / sum;
    for (int64_t k = 0; k < n; ++k) {
      const C v = to_c<C>(x[base + k * inner]) - mx;
      y[base + k * inner] = from_c<O>(kLog ? v - scale : dev_exp(v) * scale);
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
  using C = compute_t<T>;
  __shared__ C smem[32];
  const Group<kWarp> g;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* gr = grad + row * n;
    const T* yr = out + row * n;
    O* gir = grad_input + row * n;
    C s = 0;
    for (int64_t k = g.lane; k < n; k += g.width)
      s += kLog ? to_c<C>(gr[k]) : to_c<C>(gr[k]) * to_c<C>(yr[k]);
    s = allreduce<kWarp>(s, SumF(), smem);
    for (int64_t k = g.lane; k < n; k += g.width)
      gir[k] = from_c<O>(backward_element<kLog>(to_c<C>(gr[k]), to_c<C>(yr[k]), s));
  }
}

template <class T, class O, bool kLog>
__global__ void __launch_bounds__(kThreads)
    softmax_backward_strided(const T* __restrict__ grad, const T* __restrict__ out,
                             O* __restrict__ grad_input, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  const int64_t lanes = outer * inner;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < lanes;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t o = i / inner;
    const int64_t base = o * n * inner + (i - o * inner);
    C s = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = base + k * inner;
      s += kLog ? to_c<C>(grad[at]) : to_c<C>(grad[at]) * to_c<C>(out[at]);
    }
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = base + k * inner;
      grad_input[at] = from_c<O>(backward_element<kLog>(to_c<C>(grad[at]), to_c<C>(out[at]), s));
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

}  // namespace

int launch_softmax(const SoftmaxArgs& args, Stream stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  auto run = [&](auto in, auto out) {
    using T = typename decltype(in)::type;
    using O = typename decltype(out)::type;
    if (args.log)
      forward<T, O, true>(args, s);
    else
      forward<T, O, false>(args, s);
  };
  if (args.out_dtype == args.dtype) {
    if (!visit_floating(args.dtype, [&](auto t) { run(t, t); }))
      return static_cast<int>(cudaErrorInvalidValue);
  } else if (args.dtype == Dtype::Float16 && args.out_dtype == Dtype::Float32) {
    run(Tag<__half>{}, Tag<float>{});
  } else {
    return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

int launch_softmax_backward(const SoftmaxBackwardArgs& args, Stream stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  auto run = [&](auto in, auto out) {
    using T = typename decltype(in)::type;
    using O = typename decltype(out)::type;
    if (args.log)
      backward<T, O, true>(args, s);
    else
      backward<T, O, false>(args, s);
  };
  if (args.out_dtype == args.dtype) {
    if (!visit_floating(args.dtype, [&](auto t) { run(t, t); }))
      return static_cast<int>(cudaErrorInvalidValue);
  } else if (args.dtype == Dtype::Float32 && args.out_dtype == Dtype::Float16) {
    run(Tag<float>{}, Tag<__half>{});
  } else {
    return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace opd::cuda::kern
