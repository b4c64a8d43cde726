#pragma once

// The elementwise kernel family: one strided-index kernel for any layout, and a contiguous one
// that loads and stores four elements at a time when every operand allows it. Every elementwise
// operator of the plugin (arithmetic, comparisons, where, copies, fills) is a functor run by
// launch_elementwise.
//
// The strided kernel computes each operand's byte offset from the linear index (dims fastest
// first, as kern::Geometry lays them out); the contiguous one indexes arrays directly. Both are
// grid-stride loops over int64 indices.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cuda/std/complex>
#include <type_traits>
#include <utility>

#include "cuda/kernels/kernel_args.h"

namespace opd::cuda::kern {

inline constexpr int kThreads = 256;
inline constexpr int kVec = 4;

// The complex element types, laid out as std::complex (the host's ComplexFloat, ComplexDouble).
template <class T>
using complex = ::cuda::std::complex<T>;
template <class T>
inline constexpr bool kIsComplex = false;
template <class T>
inline constexpr bool kIsComplex<::cuda::std::complex<T>> = true;

// The arithmetic type of an element type: float for the 16-bit floats.
template <class T>
struct AccType {
  using type = T;
};
template <>
struct AccType<__half> {
  using type = float;
};
template <>
struct AccType<__nv_bfloat16> {
  using type = float;
};
template <class T>
using acc_t = typename AccType<T>::type;

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <class Out, int V, class F, class... VIn>
__device__ __forceinline__ Vec<Out, V> apply_vec(const F& f, VIn... in) {
  Vec<Out, V> r;
#pragma unroll
  for (int j = 0; j < V; ++j) r.v[j] = f(in.v[j]...);
  return r;
}

template <int V, class F, class Out, class... In>
__global__ void contiguous_kernel(F f, int64_t n, Out* out, const In*... in) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
  for (int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V; i < n;
       i += step) {
    if (i + V <= n) {
      *reinterpret_cast<Vec<Out, V>*>(out + i) =
          apply_vec<Out, V>(f, *reinterpret_cast<const Vec<In, V>*>(in + i)...);
    } else {
      for (int64_t k = i; k < n; ++k) out[k] = f(in[k]...);
    }
  }
}

template <class F, class Out, class... In, size_t... I>
__device__ __forceinline__ void apply_strided(const F& f, char* out, const char* const* in,
                                              const int64_t* offset, std::index_sequence<I...>) {
  *reinterpret_cast<Out*>(out + offset[0]) =
      f(*reinterpret_cast<const In*>(in[I] + offset[I + 1])...);
}

// `g` is a __grid_constant__ parameter, so that an input passed by value in it (inline_mask) is
// read where the launch put it, by every thread, without a copy into local memory.
template <class F, class Out, class... In>
__global__ void strided_kernel(F f, const __grid_constant__ Geometry g) {
  constexpr int kOperands = 1 + sizeof...(In);
  const char* in[kOperands > 1 ? kOperands - 1 : 1] = {};
#pragma unroll
  for (int k = 1; k < kOperands; ++k) {
    in[k - 1] =
        (g.inline_mask >> k) & 1u ? reinterpret_cast<const char*>(g.inline_values[k]) : g.data[k];
  }
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += step) {
    int64_t offset[kOperands] = {};
    int64_t rest = i;
    for (int d = 0; d < g.ndim; ++d) {
      const int64_t index = rest % g.sizes[d];
      rest /= g.sizes[d];
#pragma unroll
      for (int k = 0; k < kOperands; ++k) offset[k] += index * g.strides[d][k];
    }
    apply_strided<F, Out, In...>(f, g.data[0], in, offset, std::index_sequence_for<In...>{});
  }
}

// Blocks for n work items of `per_thread` elements each: enough to fill the device, no more
// than the work needs.
inline unsigned grid_for(int64_t n, int per_thread) {
  const int64_t threads = (n + per_thread - 1) / per_thread;
  int64_t blocks = (threads + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

template <class T>
inline bool aligned_for_vec(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * kVec) == 0;
}

template <int V, class Out, class... In, class F, size_t... I>
void launch_contiguous(const Geometry& g, F f, cudaStream_t s, std::index_sequence<I...>) {
  contiguous_kernel<V><<<grid_for(g.numel, V), kThreads, 0, s>>>(
      f, g.numel, reinterpret_cast<Out*>(g.data[0]), reinterpret_cast<const In*>(g.data[I + 1])...);
}

template <class Out, class... In, size_t... I>
bool all_aligned_for_vec(const Geometry& g, std::index_sequence<I...>) {
  return aligned_for_vec<Out>(g.data[0]) && (aligned_for_vec<In>(g.data[I + 1]) && ...);
}

// Runs `f` (Out f(In...)) over g's elements: operand 0 of type Out, operands 1.. of types In.
template <class Out, class... In, class F>
int launch_elementwise(const Geometry& g, F f, Stream stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (g.numel == 0) return 0;
  constexpr auto inputs = std::index_sequence_for<In...>{};
  if (g.contiguous && all_aligned_for_vec<Out, In...>(g, inputs)) {
    launch_contiguous<kVec, Out, In...>(g, f, s, inputs);
  } else if (g.contiguous) {
    launch_contiguous<1, Out, In...>(g, f, s, inputs);
  } else {
    strided_kernel<F, Out, In...><<<grid_for(g.numel, 1), kThreads, 0, s>>>(f, g);
  }
  return static_cast<int>(cudaGetLastError());
}

// Calls fn with a value of the C++ type of `dtype` (the dispatch of the .cu files). The complex
// types only when kWithComplex (kernels that move, convert or sum values); otherwise, as for a
// value outside the enum, fn is not called and the result is cudaErrorInvalidValue.
template <bool kWithComplex = false, class Fn>
int visit(Dtype dtype, Fn&& fn) {
  switch (dtype) {
    case Dtype::Bool:
      return fn(bool{});
    case Dtype::UInt8:
      return fn(uint8_t{});
    case Dtype::Int8:
      return fn(int8_t{});
    case Dtype::Int16:
      return fn(int16_t{});
    case Dtype::Int32:
      return fn(int32_t{});
    case Dtype::Int64:
      return fn(int64_t{});
    case Dtype::Float16:
      return fn(__half{});
    case Dtype::BFloat16:
      return fn(__nv_bfloat16{});
    case Dtype::Float32:
      return fn(float{});
    case Dtype::Float64:
      return fn(double{});
    case Dtype::ComplexFloat:
      if constexpr (kWithComplex) return fn(complex<float>{});
      break;
    case Dtype::ComplexDouble:
      if constexpr (kWithComplex) return fn(complex<double>{});
      break;
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

template <class T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// An element of type T from a float/double or integer value (the 16-bit floats through float).
// A floating value goes into an unsigned type through int64, so that a negative value wraps
// (-1.0 -> 255) as the CPU's conversion does on x86 (and PyTorch's c10::convert for uint8); the
// device's own conversion saturates (-1.0 -> 0).
// Complex values convert as the CPU's copy_ does: to bool, non-zero in either part; to a real
// type, the real part; from a real value, an imaginary part of zero.
template <class T, class V>
__host__ __device__ __forceinline__ T cast_to(V v) {
  if constexpr (std::is_same_v<T, V>) {
    return v;
  } else if constexpr (kIsComplex<T> && kIsComplex<V>) {
    using R = typename T::value_type;
    return T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else if constexpr (kIsComplex<T>) {
    return T(static_cast<typename T::value_type>(v));
  } else if constexpr (kIsComplex<V> && std::is_same_v<T, bool>) {
    return v.real() != 0 || v.imag() != 0;
  } else if constexpr (kIsComplex<V>) {
    return cast_to<T>(v.real());
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V(0);
  } else if constexpr (std::is_unsigned_v<T> && std::is_floating_point_v<V>) {
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    return static_cast<T>(v);
  }
}

// An element as its arithmetic type.
template <class T>
__host__ __device__ __forceinline__ acc_t<T> to_acc(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return v;
  }
}

// A Scalar argument as T, converted as Scalar::to<T> does (an integer Scalar into a floating
// type from its int64 value, not through double).
template <class T>
__host__ __device__ inline T scalar_as(ScalarArg s) {
  if constexpr (kIsComplex<T>) {
    using R = typename T::value_type;
    return s.is_integral ? T(static_cast<R>(s.i)) : T(static_cast<R>(s.f), static_cast<R>(s.imag));
  } else if constexpr (kIsFloat<T>) {
    return s.is_integral ? cast_to<T>(s.i) : cast_to<T>(s.f);
  } else if constexpr (std::is_same_v<T, bool>) {
    return s.f != 0;
  } else {
    return static_cast<T>(s.i);
  }
}

}  // namespace opd::cuda::kern
