#pragma once

// The dtype dispatch of the CPU's floating unary kernels: Float and Double run `f` (vectorised
// with SLEEF on dense runs where unary_vec.h has the function), Half and BFloat16 compute in
// float and round the result, as PyTorch's opmath types.

#include <optional>
#include <string_view>

#include "common/tensor_iterator.h"
#include "common/type_dispatch.h"
#include "cpu/elementwise_loops.h"
#include "cpu/unary_vec.h"

namespace opd::cpu {

// The value a 16-bit float computes as (float); other types unchanged.
template <class T>
auto opmath(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(x);
  } else {
    return x;
  }
}

// Runs out = f(x) over the iterator's floating compute dtype; `f` is generic over float and
// double. The dtype was checked by the meta function; `name` is for any other.
template <class F>
void floating_unary_kernel(const common::TensorIterator& iter, std::string_view name,
                           std::optional<vec::VecOp> op, const F& f) {
  switch (iter.common_dtype()) {
    case ScalarType::Float32:
      return cpu_unary_kernel_vec<float>(iter, f, op ? vec::vec_unary<float>(*op) : nullptr);
    case ScalarType::Float64:
      return cpu_unary_kernel_vec<double>(iter, f, op ? vec::vec_unary<double>(*op) : nullptr);
    case ScalarType::Float16:
      return cpu_kernel(iter, [&f](Half x) -> Half { return Half(f(static_cast<float>(x))); });
    case ScalarType::BFloat16:
      return cpu_kernel(
          iter, [&f](BFloat16 x) -> BFloat16 { return BFloat16(f(static_cast<float>(x))); });
    default:
      common::throw_not_implemented_for(name, iter.common_dtype());
  }
}

}  // namespace opd::cpu
