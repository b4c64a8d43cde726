// Bitwise and logical operators on the CPU: bitwise_and, bitwise_or, bitwise_xor (integers and
// Bool), bitwise_left_shift and bitwise_right_shift (integers) and logical_and, logical_or,
// logical_xor (any dtype, non-zero is true, Bool results).

#include <complex>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "common/elementwise.h"
#include "common/loops.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cpu::cpu_kernel;

// Op is std::bit_and<> ...; on Bool it is the logical operation.
template <class Op>
void bitwise_kernel(const TensorIterator& iter, const char* name) {
  OPD_DISPATCH_INTEGRAL_TYPES_AND(kBool, iter.common_dtype(), name, [&] {
    cpu_kernel(
        iter, [](scalar_t a, scalar_t b) -> scalar_t { return static_cast<scalar_t>(Op{}(a, b)); });
  });
}

// PyTorch's shifts of integers: C++'s on the value promoted to at least 32 bits (unsigned for the
// left shift, so that it wraps), the amount taken modulo that width as x86 does (PyTorch leaves
// larger amounts undefined; its CPU kernel gives x86's result, which this reproduces).
template <class T>
T left_shift(T a, T b) {
  using U = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
  constexpr uint64_t kMask = sizeof(U) * 8 - 1;
  const U value = static_cast<std::make_unsigned_t<T>>(a);
  return static_cast<T>(value << (static_cast<uint64_t>(b) & kMask));
}
template <class T>
T right_shift(T a, T b) {
  using P = std::conditional_t<(sizeof(T) < 4), int32_t, T>;
  constexpr uint64_t kMask = sizeof(P) * 8 - 1;
  return static_cast<T>(static_cast<P>(a) >> (static_cast<uint64_t>(b) & kMask));
}

// Whether x is non-zero (NaN is).
template <class T>
bool truthy(T x) {
  if constexpr (::opd::detail::kIsComplex<T>) {
    return x != T(0);
  } else {
    return static_cast<bool>(common::opmath_t<T>(x));
  }
}

// Op is std::logical_and<> ... or std::not_equal_to<bool> (xor), over truthy values.
template <class Op>
void logical_kernel(const TensorIterator& iter, const char* name) {
  OPD_DISPATCH_EVERY_TYPE(iter.common_dtype(), name, [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> bool { return Op{}(truthy(a), truthy(b)); });
  });
}

}  // namespace

// The structured impls (Note [Structured kernels] in tools/gen/structured.h).
void bitwise_and_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  bitwise_kernel<std::bit_and<>>(iter, "bitwise_and_cpu");
}
void bitwise_or_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  bitwise_kernel<std::bit_or<>>(iter, "bitwise_or_cpu");
}
void bitwise_xor_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  bitwise_kernel<std::bit_xor<>>(iter, "bitwise_xor_cpu");
}

void bitwise_left_shift_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  OPD_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "lshift_cpu", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return left_shift(a, b); });
  });
}
void bitwise_right_shift_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  OPD_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), "rshift_cpu", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return right_shift(a, b); });
  });
}

void logical_and_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  logical_kernel<std::logical_and<>>(iter, "logical_and_cpu");
}
void logical_or_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  logical_kernel<std::logical_or<>>(iter, "logical_or_cpu");
}
void logical_xor_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  logical_kernel<std::not_equal_to<bool>>(iter, "logical_xor_cpu");
}

}  // namespace opd::native
