// Device code of argmax and max.dim (ReduceOp::ArgMax of kernels/reduce_args.h), run by the
// kernel family of kernels/reduce.cuh. The CPU keeps the first largest element, or the first NaN
// if any; argmax's combine below returns that whatever the order the pieces meet in.

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/kernels/loops.cuh"
#include "cuda/kernels/reduce.cuh"
#include "cuda/kernels/reduce_args.h"

namespace opd::cuda::kern::reduction {

namespace {

template <class V>
struct ValueIndex {
  V value;
  int64_t index;  // -1: no element yet
};

template <class T>
struct ArgMaxOp {
  using in_t = T;
  using value_t = cmp_acc_t<T>;
  using acc_type = ValueIndex<value_t>;
  T* values;  // null for argmax
  int64_t* indices;

  __device__ acc_type identity() const { return {lowest<value_t>(), -1}; }
  __device__ acc_type load(T v, int64_t r) const { return {static_cast<value_t>(to_acc(v)), r}; }
  // NaN beats any number, a larger value a smaller one, and between equal values (NaNs included)
  // the smaller index wins.
  __device__ acc_type combine(const acc_type& a, const acc_type& b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    if (a_nan != b_nan) return a_nan ? a : b;
    if (!a_nan && a.value != b.value) return a.value > b.value ? a : b;
    return a.index <= b.index ? a : b;
  }
  __device__ acc_type shfl_down(const acc_type& a, int offset) const {
    return {__shfl_down_sync(kFullMask, a.value, offset),
            __shfl_down_sync(kFullMask, a.index, offset)};
  }
  __device__ void write(int64_t o, const acc_type& a) const {
    if (values) values[o] = cast_to<T>(a.value);
    indices[o] = a.index;
  }
};

// Returns f(op) for `a`'s input dtype; cudaErrorInvalidValue, f not called, when reduce_args.h
// does not allow `a`.
template <class F>
int with_arg_max(const ReduceArgs& a, F&& f) {
  if (a.op != ReduceOp::ArgMax || a.out_dtype != a.in_dtype || a.indices == nullptr)
    return static_cast<int>(cudaErrorInvalidValue);
  return visit(a.in_dtype, [&](auto v) -> int {
    using T = decltype(v);
    return f(ArgMaxOp<T>{static_cast<T*>(a.out), a.indices});
  });
}

}  // namespace

int64_t arg_max_workspace_bytes(const ReduceArgs& args) {
  int64_t bytes = 0;
  with_arg_max(args, [&](const auto& op) {
    bytes = workspace_bytes(op, args);
    return 0;
  });
  return bytes;
}

int launch_arg_max(const ReduceArgs& args, Stream stream) {
  return with_arg_max(args, [&](const auto& op) { return run(op, args, stream); });
}

}  // namespace opd::cuda::kern::reduction
