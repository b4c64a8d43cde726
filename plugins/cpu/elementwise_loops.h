#pragma once

// cpu_kernel for the CPU plugin: common/loops.h's loop, split across the plugin's thread pool.

#include <cstdint>

#include "common/loops.h"
#include "cpu/binary_vec.h"
#include "cpu/parallel.h"
#include "cpu/unary_vec.h"

namespace opd::cpu {

// Runs out = op(inputs...) over `iter` on the pool (see opd::common::host_kernel).
template <class Op>
void cpu_kernel(const common::TensorIterator& iter, const Op& op) {
  common::host_kernel(iter, op, &parallel_for);
}

// cpu_kernel for a unary T -> T function with an array form (unary_vec.h): runs where input and
// output are both dense go to `vec`, the others (and all of them when `vec` is null) to `op`.
// REQUIRES: the iterator's loop dtypes are T.
template <class T, class Op>
void cpu_unary_kernel_vec(const common::TensorIterator& iter, const Op& op, vec::ArrayFn<T> vec) {
  if (vec == nullptr) return cpu_kernel(iter, [op](T x) -> T { return op(x); });
  if (iter.numel() == 0) return;
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        constexpr auto kSize = static_cast<int64_t>(sizeof(T));
        if (strides[0] == kSize && strides[1] == kSize) {
          vec(reinterpret_cast<const T*>(data[1]), reinterpret_cast<T*>(data[0]), n);
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<T*>(data[0] + i * strides[0]) =
              op(*reinterpret_cast<const T*>(data[1] + i * strides[1]));
        }
      },
      &parallel_for);
  iter.cast_outputs();
}

// cpu_kernel for a binary (T, T) -> T function with an array form (binary_vec.h): runs with a
// dense output and each input dense or one repeated value go to `vec`, the others (and all of
// them when `vec` is null) to `op`. REQUIRES: the iterator's loop dtypes are T.
template <class T, class Op>
void cpu_binary_kernel_vec(const common::TensorIterator& iter, const Op& op,
                           vec::BinaryArrayFn<T> vec) {
  if (vec == nullptr) return cpu_kernel(iter, [op](T a, T b) -> T { return op(a, b); });
  if (iter.numel() == 0) return;
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        constexpr auto kSize = static_cast<int64_t>(sizeof(T));
        const auto step = [](int64_t stride) { return stride == 0 || stride == kSize; };
        if (strides[0] == kSize && step(strides[1]) && step(strides[2])) {
          vec(reinterpret_cast<const T*>(data[1]), strides[1] / kSize,
              reinterpret_cast<const T*>(data[2]), strides[2] / kSize,
              reinterpret_cast<T*>(data[0]), n);
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<T*>(data[0] + i * strides[0]) =
              op(*reinterpret_cast<const T*>(data[1] + i * strides[1]),
                 *reinterpret_cast<const T*>(data[2] + i * strides[2]));
        }
      },
      &parallel_for);
  iter.cast_outputs();
}

}  // namespace opd::cpu
