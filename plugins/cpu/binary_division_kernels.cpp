// Division with rounding on the CPU: div with rounding_mode 'trunc' or 'floor', floor_divide,
// remainder (Python's %, the sign of the divisor) and fmod (C's fmod, the sign of the dividend).

#include <cmath>
#include <type_traits>

#include "common/elementwise.h"
#include "common/loops.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::opmath_t;
using common::TensorIterator;
using cpu::cpu_binary_kernel_vec;
using cpu::cpu_kernel;
using cpu::vec::BinaryVecOp;

// Note [Integer division by zero]
// PyTorch's integral kernels of div (trunc, floor), floor_divide, remainder and fmod raise
// RuntimeError "ZeroDivisionError" for a zero divisor (floating ones give inf or NaN, as IEEE).
// PyTorch checks inside the loop, after writing part of the output; the divisors are scanned
// here first, so a failing call writes nothing. The divisor is input 1, in the compute dtype.
template <class T>
void check_no_zero_divisor(const TensorIterator& iter) {
  bool zero = false;
  iter.serial_for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        for (int64_t i = 0; i < n && !zero; ++i) {
          zero = *reinterpret_cast<const T*>(data[2] + i * strides[2]) == T(0);
        }
      },
      0, iter.numel());
  OPD_CHECK(!zero, "ZeroDivisionError");
}

// a / b, and a % b, for integers; a divisor of -1 wraps the most negative value as PyTorch's
// two's complement arithmetic does instead of trapping.
template <class T>
T int_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}
template <class T>
T int_mod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  return static_cast<T>(a % b);
}

// Python's floor division of integers: truncation, one less when the signs differ and the
// division is inexact.
template <class T>
T int_div_floor(T a, T b) {
  const T quot = int_div(a, b);
  if constexpr (std::is_signed_v<T>) {
    if ((a < 0) != (b < 0) && int_mod(a, b) != 0) return static_cast<T>(quot - 1);
  }
  return quot;
}

// Python's floor division of floats (PyTorch's div_floor_floating): from fmod, so that
// a == b * q + r holds as closely as it can; a zero divisor gives IEEE's a / b. `round` rounds
// an intermediate result to the element type (see Note [Rounding in 16-bit division]).
template <class T, class Round>
T float_div_floor(T a, T b, const Round& round) {
  if (b == 0) return round(a / b);
  const T mod = round(std::fmod(a, b));
  T div = round(round(a - mod) / b);
  if (mod != 0 && (b < 0) != (mod < 0)) div = round(div - T(1));
  if (div == 0) return std::copysign(T(0), round(a / b));
  T floordiv = std::floor(div);
  if (round(div - floordiv) > T(0.5)) floordiv = round(floordiv + T(1));
  return floordiv;
}

// Python's %: the result has the divisor's sign.
template <class T>
T int_remainder(T a, T b) {
  T r = int_mod(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && (r < 0) != (b < 0)) r = static_cast<T>(r + b);
  }
  return r;
}
template <class T>
T float_remainder(T a, T b) {
  T mod = std::fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}

// Note [Rounding in 16-bit division]
// PyTorch computes div's 'trunc' and 'floor' modes of Half and BFloat16 in the 16-bit type, so
// every intermediate result (the quotient before trunc, each step of the floor division) is
// rounded to it; trunc(2.99 rounded to bfloat16) is 3, not 2. The float ops below take a
// `round` that does the same (identity for the other types), so the results are PyTorch's.

// Runs int_op over the integral types (after the zero-divisor scan) and float_op(a, b, round),
// in opmath, over the floating ones, for the kernel `name`; float and double take the vector
// loop of `vec_op` where the CPU has one (Note [Binary kernels in AVX2]), which computes what
// float_op does.
template <class IntOp, class FloatOp>
void division_kernel(const TensorIterator& iter, const char* name, IntOp int_op, FloatOp float_op,
                     cpu::vec::BinaryVecOp vec_op) {
  OPD_DISPATCH_ALL_TYPES_AND2(kHalf, kBFloat16, iter.common_dtype(), name, [&] {
    if constexpr (std::is_integral_v<scalar_t>) {
      check_no_zero_divisor<scalar_t>(iter);
      cpu_kernel(iter, [int_op](scalar_t a, scalar_t b) -> scalar_t { return int_op(a, b); });
    } else if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      const auto exact = [](scalar_t x) { return x; };
      cpu_binary_kernel_vec<scalar_t>(
          iter, [float_op, exact](scalar_t a, scalar_t b) { return float_op(a, b, exact); },
          cpu::vec::vec_binary<scalar_t>(vec_op));
    } else {
      using opmath = opmath_t<scalar_t>;
      const auto round = [](opmath x) { return opmath(static_cast<scalar_t>(x)); };
      cpu_kernel(iter, [float_op, round](scalar_t a, scalar_t b) -> scalar_t {
        return static_cast<scalar_t>(float_op(opmath(a), opmath(b), round));
      });
    }
  });
}

void div_trunc_kernel(const TensorIterator& iter) {
  division_kernel(
      iter, "div_trunc_cpu", [](auto a, auto b) { return int_div(a, b); },
      [](auto a, auto b, auto round) { return std::trunc(round(a / b)); }, BinaryVecOp::DivTrunc);
}

void div_floor_kernel(const TensorIterator& iter) {
  division_kernel(
      iter, "div_floor_cpu", [](auto a, auto b) { return int_div_floor(a, b); },
      [](auto a, auto b, auto round) { return float_div_floor(a, b, round); },
      BinaryVecOp::DivFloor);
}

}  // namespace

// The structured impls (Note [Structured kernels] in tools/gen/structured.h).
void div_out_mode(const TensorIterator& iter, const Tensor& self, const Tensor& other,
                  std::optional<std::string_view> rounding_mode) {
  switch (common::rounding_mode(rounding_mode)) {
    case common::RoundingMode::True:
      return div_out(iter, self, other);
    case common::RoundingMode::Trunc:
      return div_trunc_kernel(iter);
    case common::RoundingMode::Floor:
      return div_floor_kernel(iter);
  }
}

// floor_divide is div with rounding_mode='floor' since PyTorch 1.13.
void floor_divide_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  div_floor_kernel(iter);
}

void remainder_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  division_kernel(
      iter, "remainder_cpu", [](auto a, auto b) { return int_remainder(a, b); },
      [](auto a, auto b, auto) { return float_remainder(a, b); }, BinaryVecOp::Remainder);
}

void fmod_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  division_kernel(
      iter, "fmod_cpu", [](auto a, auto b) { return int_mod(a, b); },
      [](auto a, auto b, auto) { return std::fmod(a, b); }, BinaryVecOp::Fmod);
}

}  // namespace opd::native
