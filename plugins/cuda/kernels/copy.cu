// copy_ between dtypes and fill_ on the device: C++'s conversions as the CPU's copy_ does them
// (to bool: non-zero; the 16-bit floats through float; complex as cast_to says), run by the
// elementwise family. Every dtype, the complex ones included.

#include <cuda_runtime.h>

#include "cuda/kernels/kernel_args.h"
#include "cuda/kernels/loops.cuh"

namespace opd::cuda::kern {
namespace {

template <class Dst, class Src>
struct ConvertFn {
  __device__ Dst operator()(Src x) const {
    if constexpr (std::is_same_v<Dst, Src>) {
      return x;
    } else {
      return cast_to<Dst>(to_acc(x));
    }
  }
};

template <class T>
struct FillFn {
  T value;
  __device__ T operator()() const { return value; }
};

}  // namespace

int launch_copy(Dtype dst, Dtype src, const Geometry& g, Stream stream) {
  return visit<true>(dst, [&](auto dst_tag) {
    using D = decltype(dst_tag);
    return visit<true>(src, [&](auto src_tag) {
      using S = decltype(src_tag);
      return launch_elementwise<D, S>(g, ConvertFn<D, S>{}, stream);
    });
  });
}

int launch_fill(Dtype dtype, const Geometry& g, ScalarArg value, Stream stream) {
  return visit<true>(dtype, [&](auto tag) {
    using T = decltype(tag);
    return launch_elementwise<T>(g, FillFn<T>{scalar_as<T>(value)}, stream);
  });
}

}  // namespace opd::cuda::kern
