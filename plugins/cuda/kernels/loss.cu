// Device code of nll_loss_forward and nll_loss_backward (see kernels/nn_args.h). Per-sample work
// (the unreduced forward, the backward's scatter) runs one thread per sample; the reduced forward
// runs in one block, as PyTorch's, accumulating in float (double for Float64).
//
// A target out of range cannot throw from the device; each kernel lowers *bad_sample to the
// smallest such sample with atomicMin, and the host reads it back after the launch (see
// loss_kernels.cpp).

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
// Per-sample kernels run kThreads (loops.cuh) threads a block.
constexpr int kReduceThreads = 1024;
constexpr int64_t kMaxBlocks = int64_t{1} << 30;

constexpr int kInvalid = static_cast<int>(cudaErrorInvalidValue);

// Returns f(T{}, I{}) for a floating `dtype` T and a target dtype I (Int64 or UInt8);
// kInvalid, f not called, for another combination.
template <class F>
int visit_types(Dtype dtype, Dtype target_dtype, F&& f) {
  return visit(dtype, [&](auto t) -> int {
    if constexpr (kIsFloat<decltype(t)>) {
      if (target_dtype == Dtype::Int64) return f(t, int64_t{});
      if (target_dtype == Dtype::UInt8) return f(t, uint8_t{});
    }
    return kInvalid;
  });
}

// The typed view of NllLossArgs' inputs.
template <class T, class I>
struct Inputs {
  NllLossArgs a;

  // Sample i's class, or -1 when it is ignored or out of range (then recorded in bad_sample).
  __device__ int64_t target(int64_t i) const {
    const int64_t c = static_cast<int64_t>(static_cast<const I*>(a.target)[i * a.target_stride]);
    if (c == a.ignore_index) return -1;
    if (c < 0 || c >= a.n_classes) {
      atomicMin(reinterpret_cast<unsigned long long*>(a.bad_sample),
                static_cast<unsigned long long>(i));
      return -1;
    }
    return c;
  }
  __device__ acc_t<T> weight(int64_t c) const {
    return a.weight ? to_acc(static_cast<const T*>(a.weight)[c * a.weight_stride]) : acc_t<T>(1);
  }
  __device__ acc_t<T> input(int64_t i, int64_t c) const {
    return to_acc(
        static_cast<const T*>(a.input)[i * a.input_sample_stride + c * a.input_class_stride]);
  }
};

template <class T, class I>
__global__ void __launch_bounds__(kThreads)
    nll_forward_per_sample(NllLossArgs a, T* __restrict__ out, T* __restrict__ total_weight) {
  using C = acc_t<T>;
  const Inputs<T, I> in{a};
  if (blockIdx.x == 0 && threadIdx.x == 0) *total_weight = cast_to<T>(C(0));
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < a.batch;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = in.target(i);
    out[i] = cast_to<T>(c < 0 ? C(0) : -in.input(i, c) * in.weight(c));
  }
}

// The sum of every thread's v, in thread 0 (one block).
template <class C>
__device__ C block_sum(C v, C* smem) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(kFullMask, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? smem[lane] : C(0);
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(kFullMask, v, offset);
  }
  return v;
}

// One block.
template <class T, class I>
__global__ void __launch_bounds__(kReduceThreads)
    nll_forward_reduce(NllLossArgs a, T* __restrict__ out, T* __restrict__ total_weight) {
  using C = acc_t<T>;
  __shared__ C smem[32];
  const Inputs<T, I> in{a};
  C loss = 0, weight_sum = 0;
  for (int64_t i = threadIdx.x; i < a.batch; i += blockDim.x) {
    const int64_t c = in.target(i);
    if (c < 0) continue;
    const C w = in.weight(c);
    loss -= in.input(i, c) * w;
    weight_sum += w;
  }
  loss = block_sum(loss, smem);
  weight_sum = block_sum(weight_sum, smem);
  if (threadIdx.x == 0) {
    if (a.reduction == NllReduction::Mean)
      loss = a.batch == 0 ? std::numeric_limits<C>::quiet_NaN() : loss / weight_sum;
    *out = cast_to<T>(loss);
    *total_weight = cast_to<T>(weight_sum);
  }
}

// grad_input is zero; writes the one non-zero element of each sample not ignored.
template <class T, class I>
__global__ void __launch_bounds__(kThreads)
    nll_backward(NllLossArgs a, const T* __restrict__ grad_output, int64_t grad_output_stride,
                 const T* __restrict__ total_weight, T* __restrict__ grad_input) {
  using C = acc_t<T>;
  const Inputs<T, I> in{a};
  const bool per_sample = a.batched && a.reduction == NllReduction::None;
  const int64_t row = a.batched ? a.n_classes : 0;  // grad_input is contiguous
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < a.batch;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = in.target(i);
    if (c < 0) continue;
    C g;
    if (per_sample) {
      g = to_acc(grad_output[i * grad_output_stride]);
    } else {
      g = to_acc(grad_output[0]);
      if (a.reduction == NllReduction::Mean) g /= to_acc(total_weight[0]);
    }
    grad_input[i * row + c] = cast_to<T>(-in.weight(c) * g);
  }
}

unsigned per_sample_blocks(int64_t batch) {
  const int64_t n = (batch + kThreads - 1) / kThreads;
  return static_cast<unsigned>(n < 1 ? 1 : n < kMaxBlocks ? n : kMaxBlocks);
}

}  // namespace

int launch_nll_loss_forward(const NllLossArgs& args, void* output, void* total_weight,
                            Stream stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return visit_types(args.dtype, args.target_dtype, [&](auto t, auto i) -> int {
    using T = decltype(t);
    using I = decltype(i);
    const cudaError_t err = cudaMemsetAsync(args.bad_sample, 0x7F, sizeof(int64_t), s);
    if (err != cudaSuccess) return static_cast<int>(err);
    if (args.batched && args.reduction == NllReduction::None)
      nll_forward_per_sample<T, I><<<per_sample_blocks(args.batch), kThreads, 0, s>>>(
          args, static_cast<T*>(output), static_cast<T*>(total_weight));
    else
      nll_forward_reduce<T, I><<<1, kReduceThreads, 0, s>>>(args, static_cast<T*>(output),
                                                            static_cast<T*>(total_weight));
    return static_cast<int>(cudaGetLastError());
  });
}

int launch_nll_loss_backward(const NllLossArgs& args, const void* grad_output,
                             int64_t grad_output_stride, const void* total_weight, void* grad_input,
                             int64_t grad_input_numel, Stream stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return visit_types(args.dtype, args.target_dtype, [&](auto t, auto i) -> int {
    using T = decltype(t);
    using I = decltype(i);
    cudaError_t err = cudaMemsetAsync(args.bad_sample, 0x7F, sizeof(int64_t), s);
    // All-zero bits are +0 in every floating type.
    if (err == cudaSuccess)
      err = cudaMemsetAsync(grad_input, 0, static_cast<size_t>(grad_input_numel) * sizeof(T), s);
    if (err != cudaSuccess) return static_cast<int>(err);
    nll_backward<T, I><<<per_sample_blocks(args.batch), kThreads, 0, s>>>(
        args, static_cast<const T*>(grad_output), grad_output_stride,
        static_cast<const T*>(total_weight), static_cast<T*>(grad_input));
    return static_cast<int>(cudaGetLastError());
  });
}

}  // namespace opd::cuda::kern
