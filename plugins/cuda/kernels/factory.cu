// arange, rand and randn on the device. The random values are the CPU plugin's, element for
// element (Note [Random numbers per element]): element i draws Philox block (offset + i).

#include <cuda_runtime.h>

#include "common/philox.h"
#include "cuda/kernels/kernel_args.h"
#include "cuda/kernels/loops.cuh"

namespace opd::cuda::kern {
namespace {

// step * i rounded on its own: nvcc would otherwise fuse `start + step * i` into one fma, whose
// single rounding gives other values than the CPU's multiply-then-add.
__device__ __forceinline__ float product(float step, float i) { return __fmul_rn(step, i); }
__device__ __forceinline__ double product(double step, double i) { return __dmul_rn(step, i); }
__device__ __forceinline__ int64_t product(int64_t step, int64_t i) { return step * i; }

// start + i * step in PyTorch's accumulation type (int64 for integers, float for the 16-bit
// floats, double otherwise), then cast, as the CPU's arange.
template <class T, class Acc>
__global__ void arange_kernel(T* out, int64_t n, Acc start, Acc step) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = cast_to<T>(start + product(step, static_cast<Acc>(i)));
  }
}

template <class T>
__device__ T uniform(const philox::Block& b) {
  if constexpr (std::is_same_v<T, double>) {
    return philox::uniform_double(b.v[0], b.v[1]);
  } else if constexpr (std::is_same_v<T, float>) {
    return philox::uniform_float(b.v[0]);
  } else if constexpr (std::is_same_v<T, __half>) {
    return cast_to<T>(philox::uniform_bits<11>(b.v[0]));
  } else {
    return cast_to<T>(philox::uniform_bits<8>(b.v[0]));
  }
}

template <class T>
__global__ void random_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset, bool normal) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const philox::Block b = philox::philox4x32_10(seed, offset + static_cast<uint64_t>(i));
    if (normal) {
      const double v = philox::normal_double(b);
      if constexpr (std::is_same_v<T, double>) {
        out[i] = v;
      } else {
        out[i] = cast_to<T>(static_cast<float>(v));
      }
    } else {
      out[i] = uniform<T>(b);
    }
  }
}

}  // namespace

int launch_arange(Dtype dtype, void* out, int64_t n, ScalarArg start, ScalarArg step,
                  Stream stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return static_cast<int>(cudaErrorInvalidValue);  // the host refuses bool first
    } else {
      using Acc = std::conditional_t<!kIsFloat<T>, int64_t,
                                     std::conditional_t<sizeof(T) == 2, float, double>>;
      arange_kernel<<<grid_for(n, 1), kThreads, 0, s>>>(
          static_cast<T*>(out), n, scalar_as<Acc>(start), scalar_as<Acc>(step));
      return static_cast<int>(cudaGetLastError());
    }
  });
}

int launch_random(Dtype dtype, void* out, int64_t n, uint64_t seed, uint64_t offset, bool normal,
                  Stream stream) {
  auto s = static_cast<cudaStream_t>(stream);
  return visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!kIsFloat<T>) {
      return static_cast<int>(cudaErrorInvalidValue);  // the host refuses these first
    } else {
      random_kernel<<<grid_for(n, 1), kThreads, 0, s>>>(static_cast<T*>(out), n, seed, offset,
                                                        normal);
      return static_cast<int>(cudaGetLastError());
    }
  });
}

}  // namespace opd::cuda::kern
