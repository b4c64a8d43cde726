// Device code of sum, mean, amax and amin (see kernels/reduce_args.h), run by the kernel family
// of kernels/reduce.cuh; argmax and max.dim are in arg_reduce.cu. Sum and mean accumulate in
// float for the floating types (double for Float64), in int64 for integers and Bool, and in the
// element's own precision for the complex types, as PyTorch's CUDA kernels.

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/kernels/loops.cuh"
#include "cuda/kernels/reduce.cuh"
#include "cuda/kernels/reduce_args.h"

namespace opd::cuda::kern {

namespace reduction {
namespace {

// What sum and mean accumulate T in.
template <class T>
using sum_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                     std::conditional_t<kIsFloat<T>, float, int64_t>>;

template <class T, class Out, bool kMean>
struct SumOp {
  using in_t = T;
  using acc_type = sum_acc_t<T>;
  Out* out;
  int64_t count;  // the elements of one output (mean's divisor)

  __device__ acc_type identity() const { return acc_type(0); }
  __device__ acc_type load(T v, int64_t) const { return static_cast<acc_type>(to_acc(v)); }
  __device__ acc_type combine(acc_type a, acc_type b) const { return a + b; }
  __device__ acc_type shfl_down(acc_type a, int offset) const {
    return __shfl_down_sync(kFullMask, a, offset);
  }
  __device__ void write(int64_t o, acc_type a) const {
    if constexpr (kMean) a = a / static_cast<acc_type>(count);
    out[o] = cast_to<Out>(a);
  }
};

// The running sum of complex elements: a plain pair, as block_reduce keeps acc_type in shared
// memory, which takes no type with a constructor.
template <class R>
struct ComplexSum {
  R re, im;
};

// sum and mean of ComplexFloat / ComplexDouble, in their own precision (PyTorch's CUDA sum).
template <class T, bool kMean>
struct ComplexSumOp {
  using in_t = T;
  using R = typename T::value_type;
  using acc_type = ComplexSum<R>;
  T* out;
  int64_t count;

  __device__ acc_type identity() const { return {R(0), R(0)}; }
  __device__ acc_type load(T v, int64_t) const { return {v.real(), v.imag()}; }
  __device__ acc_type combine(acc_type a, acc_type b) const { return {a.re + b.re, a.im + b.im}; }
  __device__ acc_type shfl_down(acc_type a, int offset) const {
    return {__shfl_down_sync(kFullMask, a.re, offset), __shfl_down_sync(kFullMask, a.im, offset)};
  }
  __device__ void write(int64_t o, acc_type a) const {
    if constexpr (kMean) {
      a.re /= static_cast<R>(count);
      a.im /= static_cast<R>(count);
    }
    out[o] = T(a.re, a.im);
  }
};

// amax (kMax) and amin: NaN wins.
template <class T, bool kMax>
struct MinMaxOp {
  using in_t = T;
  using acc_type = cmp_acc_t<T>;
  T* out;

  __device__ acc_type identity() const { return kMax ? lowest<acc_type>() : highest<acc_type>(); }
  __device__ acc_type load(T v, int64_t) const { return static_cast<acc_type>(to_acc(v)); }
  __device__ acc_type combine(acc_type a, acc_type b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return (kMax ? b > a : b < a) ? b : a;
  }
  __device__ acc_type shfl_down(acc_type a, int offset) const {
    return __shfl_down_sync(kFullMask, a, offset);
  }
  __device__ void write(int64_t o, acc_type a) const { out[o] = cast_to<T>(a); }
};

constexpr int kInvalid = static_cast<int>(cudaErrorInvalidValue);

// Returns f(op) for the Op that `a` asks for (Sum, Mean, Max or Min) over real elements T;
// kInvalid, f not called, for a combination of dtypes reduce_args.h does not list.
template <class T, class F>
int with_real_op(const ReduceArgs& a, F& f) {
  const bool same = a.out_dtype == a.in_dtype;
  switch (a.op) {
    case ReduceOp::Sum:
      if (same) return f(SumOp<T, T, false>{static_cast<T*>(a.out), a.size});
      if constexpr (std::is_integral_v<T>) {
        if (a.out_dtype == Dtype::Int64)
          return f(SumOp<T, int64_t, false>{static_cast<int64_t*>(a.out), a.size});
      }
      return kInvalid;
    case ReduceOp::Mean:
      if constexpr (kIsFloat<T>) {
        if (same) return f(SumOp<T, T, true>{static_cast<T*>(a.out), a.size});
      }
      return kInvalid;
    case ReduceOp::Max:
      return same ? f(MinMaxOp<T, true>{static_cast<T*>(a.out)}) : kInvalid;
    case ReduceOp::Min:
      return same ? f(MinMaxOp<T, false>{static_cast<T*>(a.out)}) : kInvalid;
    case ReduceOp::ArgMax:
      break;  // arg_reduce.cu
  }
  return kInvalid;
}

// with_real_op for any element type: complex elements take Sum and Mean only (they have no
// order), into their own dtype.
template <class F>
int with_op(const ReduceArgs& a, F&& f) {
  return visit</*kWithComplex=*/true>(a.in_dtype, [&](auto v) -> int {
    using T = decltype(v);
    if constexpr (kIsComplex<T>) {
      if (a.out_dtype != a.in_dtype) return kInvalid;
      if (a.op == ReduceOp::Sum) return f(ComplexSumOp<T, false>{static_cast<T*>(a.out), a.size});
      if (a.op == ReduceOp::Mean) return f(ComplexSumOp<T, true>{static_cast<T*>(a.out), a.size});
      return kInvalid;
    } else {
      return with_real_op<T>(a, f);
    }
  });
}

}  // namespace
}  // namespace reduction

int64_t reduce_workspace_bytes(const ReduceArgs& args) {
  if (args.outer * args.inner == 0) return 0;
  if (args.op == ReduceOp::ArgMax) return reduction::arg_max_workspace_bytes(args);
  int64_t bytes = 0;
  reduction::with_op(args, [&](const auto& op) {
    bytes = reduction::workspace_bytes(op, args);
    return 0;
  });
  return bytes;
}

int launch_reduce(const ReduceArgs& args, Stream stream) {
  if (args.outer * args.inner == 0) return static_cast<int>(cudaSuccess);
  if (args.op == ReduceOp::ArgMax) return reduction::launch_arg_max(args, stream);
  return reduction::with_op(args, [&](const auto& op) { return reduction::run(op, args, stream); });
}

}  // namespace opd::cuda::kern
