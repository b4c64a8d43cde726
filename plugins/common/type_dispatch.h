#pragma once

// Dtype dispatch for kernels (PyTorch's AT_DISPATCH_* macros): run a generic lambda with
// `scalar_t` bound to the C++ type of a runtime ScalarType.
//
//   OPD_DISPATCH_ALL_TYPES_AND_BOOL(iter.common_dtype(), "add_cpu", [&] {
//     cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return a + b; });
//   });
//
// A dtype outside the macro's set throws TypeError in PyTorch's words, naming the kernel:
//   "\"add_cpu\" not implemented for 'Half'"
// Every case must return the same type (usually void).
//
// Note [Dtype checks in the metadata step]
// A Meta kernel must raise what the CPU kernel raises, so the checks a CPU kernel would only meet
// while dispatching (an unsupported dtype, a Scalar argument that does not fit the dtype) are
// made first, in the shared metadata step (common/elementwise.h), with check_dtype_in and
// check_scalar_fits; the kernel's own dispatch then never fails.

#include <cmath>
#include <complex>
#include <string_view>
#include <type_traits>

#include "opd/half.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"

namespace opd::common {

// Throws TypeError "\"<name>\" not implemented for '<dtype>'".
[[noreturn]] void throw_not_implemented_for(std::string_view name, ScalarType dtype);

// The dtype sets of the dispatch macros below.
enum class TypeSet {
  Floating,    // OPD_DISPATCH_FLOATING_TYPES
  Integral,    // OPD_DISPATCH_INTEGRAL_TYPES
  All,         // OPD_DISPATCH_ALL_TYPES
  AllAndBool,  // OPD_DISPATCH_ALL_TYPES_AND_BOOL
  Every,       // OPD_DISPATCH_EVERY_TYPE
};
// Throws what the macro of `set` would throw for `dtype` under `name`.
// See Note [Dtype checks in the metadata step].
void check_dtype_in(std::string_view name, ScalarType dtype, TypeSet set);

// `value` as the element type T with Scalar::to's overflow checks (ValueError "value cannot be
// converted to type uint8_t without overflow"); the 16-bit floats go through float, Half
// refusing finite values beyond its range.
// visit_dtype for the floating types only (Float32, Float64, Half, BFloat16).
template <class F>
void visit_floating_dtype(ScalarType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case ScalarType::Float32:
      return f(float{});
    case ScalarType::Float64:
      return f(double{});
    case ScalarType::Float16:
      return f(Half{});
    case ScalarType::BFloat16:
      return f(BFloat16{});
    default:
      throw_not_implemented_for(op, dtype);
  }
}

template <class T>
T scalar_to(const Scalar& value);
// Throws what scalar_to would for the element type of `dtype` (any dtype but Undefined).
void check_scalar_fits(const Scalar& value, ScalarType dtype);

// The ScalarType of a kernel element type: cpp_type_to_scalar_type plus Half and BFloat16.
template <class T>
constexpr ScalarType scalar_type_of() {
  if constexpr (std::is_same_v<T, Half>)
    return ScalarType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return ScalarType::BFloat16;
  else
    return cpp_type_to_scalar_type<T>();
}

}  // namespace opd::common

#define OPD_PRIVATE_CASE_TYPE(enum_value, cpp_type, ...) \
  case ::opd::ScalarType::enum_value: {                  \
    using scalar_t [[maybe_unused]] = cpp_type;          \
    return __VA_ARGS__();                                \
  }

#define OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME, ...)                       \
  [&] {                                                                    \
    const ::opd::ScalarType opd_dispatch_type = (TYPE);                    \
    switch (opd_dispatch_type) {                                           \
      __VA_ARGS__                                                          \
      default:                                                             \
        ::opd::common::throw_not_implemented_for(NAME, opd_dispatch_type); \
    }                                                                      \
  }()

#define OPD_PRIVATE_CASES_INTEGRAL(...)              \
  OPD_PRIVATE_CASE_TYPE(UInt8, uint8_t, __VA_ARGS__) \
  OPD_PRIVATE_CASE_TYPE(Int32, int32_t, __VA_ARGS__) \
  OPD_PRIVATE_CASE_TYPE(Int64, int64_t, __VA_ARGS__)

#define OPD_PRIVATE_CASES_FLOATING(...)              \
  OPD_PRIVATE_CASE_TYPE(Float32, float, __VA_ARGS__) \
  OPD_PRIVATE_CASE_TYPE(Float64, double, __VA_ARGS__)

// Float32, Float64.
#define OPD_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME, OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__))

// UInt8, Int32, Int64.
#define OPD_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME, OPD_PRIVATE_CASES_INTEGRAL(__VA_ARGS__))

// clang-format off
// UInt8, Int32, Int64, Float32, Float64: the kernels' numeric types.
#define OPD_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                 \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                       \
      OPD_PRIVATE_CASES_INTEGRAL(__VA_ARGS__)                   \
      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__))

// The numeric types and Bool.
#define OPD_DISPATCH_ALL_TYPES_AND_BOOL(TYPE, NAME, ...)        \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                       \
      OPD_PRIVATE_CASE_TYPE(Bool, bool, __VA_ARGS__)            \
      OPD_PRIVATE_CASES_INTEGRAL(__VA_ARGS__)                   \
      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__))

// Every ScalarType but Undefined, with Half and BFloat16 as opd::Half / BFloat16: for
// kernels that only move or convert values (copy_, fill_).
#define OPD_DISPATCH_EVERY_TYPE(TYPE, NAME, ...)                                     \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                            \
      OPD_PRIVATE_CASE_TYPE(Bool, bool, __VA_ARGS__)                                 \
      OPD_PRIVATE_CASE_TYPE(UInt8, uint8_t, __VA_ARGS__)                             \
      OPD_PRIVATE_CASE_TYPE(Int8, int8_t, __VA_ARGS__)                               \
      OPD_PRIVATE_CASE_TYPE(Int16, int16_t, __VA_ARGS__)                             \
      OPD_PRIVATE_CASE_TYPE(Int32, int32_t, __VA_ARGS__)                             \
      OPD_PRIVATE_CASE_TYPE(Int64, int64_t, __VA_ARGS__)                             \
      OPD_PRIVATE_CASE_TYPE(Float16, ::opd::Half, __VA_ARGS__)               \
      OPD_PRIVATE_CASE_TYPE(BFloat16, ::opd::BFloat16, __VA_ARGS__)          \
      OPD_PRIVATE_CASE_TYPE(Float32, float, __VA_ARGS__)                             \
      OPD_PRIVATE_CASE_TYPE(Float64, double, __VA_ARGS__)                            \
      OPD_PRIVATE_CASE_TYPE(ComplexFloat, std::complex<float>, __VA_ARGS__)          \
      OPD_PRIVATE_CASE_TYPE(ComplexDouble, std::complex<double>, __VA_ARGS__))
// clang-format on

namespace opd::common {

// Calls f(T{}) with the C++ type of `dtype` (Half and BFloat16 as Half / BFloat16),
// complex types only when kComplex; otherwise throws TypeError "\"op\" not implemented for
// 'ComplexFloat'" (throw_not_implemented_for). For kernels that need the type as a template
// argument of a generic lambda rather than a macro body.
template <bool kComplex = true, class F>
void visit_dtype(ScalarType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case ScalarType::Float16:
      return f(Half{});
    case ScalarType::BFloat16:
      return f(BFloat16{});
    case ScalarType::Bool:
      return f(bool{});
    case ScalarType::UInt8:
      return f(uint8_t{});
    case ScalarType::Int8:
      return f(int8_t{});
    case ScalarType::Int16:
      return f(int16_t{});
    case ScalarType::Int32:
      return f(int32_t{});
    case ScalarType::Int64:
      return f(int64_t{});
    case ScalarType::Float32:
      return f(float{});
    case ScalarType::Float64:
      return f(double{});
    case ScalarType::ComplexFloat:
      if constexpr (kComplex) return f(std::complex<float>{});
      break;
    case ScalarType::ComplexDouble:
      if constexpr (kComplex) return f(std::complex<double>{});
      break;
    default:
      break;
  }
  throw_not_implemented_for(op, dtype);
}

template <class T>
T scalar_to(const Scalar& value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    const auto f = value.to<float>();
    constexpr float kHalfMax = 65504.0f;
    if (std::is_same_v<T, Half> && std::isfinite(f) && (f > kHalfMax || f < -kHalfMax)) {
      opd::detail::throw_scalar_overflow("Half");
    }
    return T(f);
  } else {
    return value.to<T>();
  }
}

}  // namespace opd::common
