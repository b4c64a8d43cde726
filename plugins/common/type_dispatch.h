#pragma once

// Dtype dispatch for kernels (PyTorch's AT_DISPATCH_* macros): run a generic lambda with
// `scalar_t` bound to the C++ type of a runtime ScalarType.
//
//   OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(),
//                                           "add_cpu", [&] {
//     cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return a + b; });
//   });
//
// The sets are PyTorch's: FLOATING (Float, Double), INTEGRAL (Byte, Char, Short, Int, Long),
// ALL (the two), COMPLEX (ComplexFloat, ComplexDouble), each with _AND<n>(extra types...) to add
// Bool, Half or BFloat16 as PyTorch's AT_DISPATCH_*_AND<n> do. Half and BFloat16 are opd::Half
// and opd::BFloat16, storage types that convert to float: compute in opmath_t<scalar_t> (float
// for them, scalar_t otherwise), as PyTorch's opmath_type, and convert the result back.
//
// A dtype outside the macro's set throws Error (Python's RuntimeError) in PyTorch's words,
// naming the kernel: "\"add_cpu\" not implemented for 'ComplexFloat'". Every case must return
// the same type (usually void).
//
// Note [Dtype checks in the metadata step]
// A Meta kernel must raise what the CPU kernel raises, so the checks a CPU kernel would only meet
// while dispatching (an unsupported dtype, a Scalar argument that does not fit the dtype) are
// made first, in the shared metadata step (common/elementwise.h), with check_dtype_in and
// check_scalar_fits; the kernel's own dispatch then never fails. The TypeSet given to
// check_dtype_in names the kernel's macro: TypeSet::All.with(kBool, kHalf, kBFloat16) for
// OPD_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16, ...).

#include <cmath>
#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "opd/half.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"

namespace opd::common {

// Throws Error "\"<name>\" not implemented for '<dtype>'".
[[noreturn]] void throw_not_implemented_for(std::string_view name, ScalarType dtype);

// A set of dtypes: the sets of the dispatch macros below, and their additions.
class TypeSet {
 public:
  constexpr TypeSet() = default;
  template <class... T>
  static constexpr TypeSet of(T... types) {
    return TypeSet(((uint32_t{1} << static_cast<int>(types)) | ... | 0u));
  }
  constexpr bool contains(ScalarType t) const {
    return t != ScalarType::Undefined && (bits_ >> static_cast<int>(t)) & 1u;
  }
  constexpr TypeSet operator|(TypeSet o) const { return TypeSet(bits_ | o.bits_); }
  // This set and `types` (PyTorch's _AND<n>).
  template <class... T>
  constexpr TypeSet with(T... types) const {
    return *this | of(types...);
  }

  static const TypeSet Floating;    // OPD_DISPATCH_FLOATING_TYPES
  static const TypeSet Integral;    // OPD_DISPATCH_INTEGRAL_TYPES
  static const TypeSet All;         // OPD_DISPATCH_ALL_TYPES
  static const TypeSet AllAndBool;  // OPD_DISPATCH_ALL_TYPES_AND_BOOL
  static const TypeSet Complex;     // OPD_DISPATCH_COMPLEX_TYPES
  static const TypeSet Every;       // OPD_DISPATCH_EVERY_TYPE

 private:
  explicit constexpr TypeSet(uint32_t bits) : bits_(bits) {}
  uint32_t bits_ = 0;
};
inline constexpr TypeSet TypeSet::Floating = TypeSet::of(kFloat, kDouble);
inline constexpr TypeSet TypeSet::Integral = TypeSet::of(kByte, kChar, kShort, kInt, kLong);
inline constexpr TypeSet TypeSet::All = TypeSet::Integral | TypeSet::Floating;
inline constexpr TypeSet TypeSet::AllAndBool = TypeSet::All.with(kBool);
inline constexpr TypeSet TypeSet::Complex = TypeSet::of(kComplexFloat, kComplexDouble);
inline constexpr TypeSet TypeSet::Every =
    TypeSet::AllAndBool.with(kHalf, kBFloat16) | TypeSet::Complex;

// Throws what a macro of `set` would throw for `dtype` under `name`.
// See Note [Dtype checks in the metadata step].
void check_dtype_in(std::string_view name, ScalarType dtype, TypeSet set);

// The C++ element type of a ScalarType (Half and BFloat16 as opd::Half and opd::BFloat16).
template <ScalarType>
struct cpp_type;
#define OPD_PRIVATE_CPP_TYPE(enum_value, cpp) \
  template <>                                 \
  struct cpp_type<ScalarType::enum_value> {   \
    using type = cpp;                         \
  };
OPD_PRIVATE_CPP_TYPE(Bool, bool)
OPD_PRIVATE_CPP_TYPE(UInt8, uint8_t)
OPD_PRIVATE_CPP_TYPE(Int8, int8_t)
OPD_PRIVATE_CPP_TYPE(Int16, int16_t)
OPD_PRIVATE_CPP_TYPE(Int32, int32_t)
OPD_PRIVATE_CPP_TYPE(Int64, int64_t)
OPD_PRIVATE_CPP_TYPE(Float16, ::opd::Half)
OPD_PRIVATE_CPP_TYPE(BFloat16, ::opd::BFloat16)
OPD_PRIVATE_CPP_TYPE(Float32, float)
OPD_PRIVATE_CPP_TYPE(Float64, double)
OPD_PRIVATE_CPP_TYPE(ComplexFloat, std::complex<float>)
OPD_PRIVATE_CPP_TYPE(ComplexDouble, std::complex<double>)
#undef OPD_PRIVATE_CPP_TYPE
template <ScalarType t>
using cpp_type_t = typename cpp_type<t>::type;

// Whether T is opd::Half or opd::BFloat16.
template <class T>
inline constexpr bool kIsReducedFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
// The type to compute T in (PyTorch's opmath_type): float for Half and BFloat16, else T.
template <class T>
using opmath_t = std::conditional_t<kIsReducedFloat<T>, float, T>;
// Whether T is a floating type (the 16-bit ones included) or complex: NaN can occur.
template <class T>
inline constexpr bool kIsFloatingOrComplex =
    std::is_floating_point_v<T> || kIsReducedFloat<T> || ::opd::detail::kIsComplex<T>;

// `value` as the element type T with Scalar::to's overflow checks (Error "value cannot be
// converted to type uint8_t without overflow"); the 16-bit floats go through float, Half
// refusing finite values beyond its range.
template <class T>
T scalar_to(const Scalar& value);
// Throws what scalar_to would for the element type of `dtype` (any dtype but Undefined).
void check_scalar_fits(const Scalar& value, ScalarType dtype);

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

// One case: `enum_value` is a ScalarType constant (::opd::kHalf, ::opd::ScalarType::Float16).
#define OPD_PRIVATE_CASE(enum_value, ...)                                    \
  case enum_value: {                                                         \
    using scalar_t [[maybe_unused]] = ::opd::common::cpp_type_t<enum_value>; \
    return __VA_ARGS__();                                                    \
  }
// The former spelling, with the C++ type given: kept for kernels that name it.
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

// clang-format off
#define OPD_PRIVATE_CASES_INTEGRAL(...)         \
  OPD_PRIVATE_CASE(::opd::kByte, __VA_ARGS__)   \
  OPD_PRIVATE_CASE(::opd::kChar, __VA_ARGS__)   \
  OPD_PRIVATE_CASE(::opd::kShort, __VA_ARGS__)  \
  OPD_PRIVATE_CASE(::opd::kInt, __VA_ARGS__)    \
  OPD_PRIVATE_CASE(::opd::kLong, __VA_ARGS__)

#define OPD_PRIVATE_CASES_FLOATING(...)         \
  OPD_PRIVATE_CASE(::opd::kFloat, __VA_ARGS__)  \
  OPD_PRIVATE_CASE(::opd::kDouble, __VA_ARGS__)

#define OPD_PRIVATE_CASES_COMPLEX(...)                 \
  OPD_PRIVATE_CASE(::opd::kComplexFloat, __VA_ARGS__)  \
  OPD_PRIVATE_CASE(::opd::kComplexDouble, __VA_ARGS__)

#define OPD_PRIVATE_CASES_ALL(...)              \
  OPD_PRIVATE_CASES_INTEGRAL(__VA_ARGS__)       \
  OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__)

// Float, Double.
#define OPD_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME, OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__))
#define OPD_DISPATCH_FLOATING_TYPES_AND(T1, TYPE, NAME, ...)          \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                             \
      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__)                         \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__))
#define OPD_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...)     \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                             \
      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__)                         \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__)                               \
      OPD_PRIVATE_CASE(T2, __VA_ARGS__))
// Float, Double, ComplexFloat, ComplexDouble.
#define OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND(T1, TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                \
      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__)                            \
      OPD_PRIVATE_CASES_COMPLEX(__VA_ARGS__)                             \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__))
#define OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(T1, T2, TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                     \
      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__)                                 \
      OPD_PRIVATE_CASES_COMPLEX(__VA_ARGS__)                                  \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__)                                       \
      OPD_PRIVATE_CASE(T2, __VA_ARGS__))

// Byte, Char, Short, Int, Long.
#define OPD_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME, OPD_PRIVATE_CASES_INTEGRAL(__VA_ARGS__))
#define OPD_DISPATCH_INTEGRAL_TYPES_AND(T1, TYPE, NAME, ...)          \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                             \
      OPD_PRIVATE_CASES_INTEGRAL(__VA_ARGS__)                         \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__))

// The integral and floating types: the kernels' numeric types.
#define OPD_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME, OPD_PRIVATE_CASES_ALL(__VA_ARGS__))
#define OPD_DISPATCH_ALL_TYPES_AND(T1, TYPE, NAME, ...)               \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                             \
      OPD_PRIVATE_CASES_ALL(__VA_ARGS__)                              \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__))
#define OPD_DISPATCH_ALL_TYPES_AND2(T1, T2, TYPE, NAME, ...)          \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                             \
      OPD_PRIVATE_CASES_ALL(__VA_ARGS__)                              \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__)                               \
      OPD_PRIVATE_CASE(T2, __VA_ARGS__))
#define OPD_DISPATCH_ALL_TYPES_AND3(T1, T2, T3, TYPE, NAME, ...)      \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                             \
      OPD_PRIVATE_CASES_ALL(__VA_ARGS__)                              \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__)                               \
      OPD_PRIVATE_CASE(T2, __VA_ARGS__)                               \
      OPD_PRIVATE_CASE(T3, __VA_ARGS__))
// The numeric types and Bool (OPD_DISPATCH_ALL_TYPES_AND(kBool, ...)).
#define OPD_DISPATCH_ALL_TYPES_AND_BOOL(TYPE, NAME, ...) \
  OPD_DISPATCH_ALL_TYPES_AND(::opd::kBool, TYPE, NAME, __VA_ARGS__)

// ComplexFloat, ComplexDouble.
#define OPD_DISPATCH_COMPLEX_TYPES(TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME, OPD_PRIVATE_CASES_COMPLEX(__VA_ARGS__))
// The numeric and complex types.
#define OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND(T1, TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                           \
      OPD_PRIVATE_CASES_ALL(__VA_ARGS__)                            \
      OPD_PRIVATE_CASES_COMPLEX(__VA_ARGS__)                        \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__))
#define OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(T1, T2, TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                \
      OPD_PRIVATE_CASES_ALL(__VA_ARGS__)                                 \
      OPD_PRIVATE_CASES_COMPLEX(__VA_ARGS__)                             \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__)                                  \
      OPD_PRIVATE_CASE(T2, __VA_ARGS__))
#define OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(T1, T2, T3, TYPE, NAME, ...) \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                    \
      OPD_PRIVATE_CASES_ALL(__VA_ARGS__)                                     \
      OPD_PRIVATE_CASES_COMPLEX(__VA_ARGS__)                                 \
      OPD_PRIVATE_CASE(T1, __VA_ARGS__)                                      \
      OPD_PRIVATE_CASE(T2, __VA_ARGS__)                                      \
      OPD_PRIVATE_CASE(T3, __VA_ARGS__))

// Every ScalarType but Undefined: for kernels that only move or convert values (copy_, fill_).
#define OPD_DISPATCH_EVERY_TYPE(TYPE, NAME, ...)                    \
  OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(::opd::kBool, ::opd::kHalf, \
      ::opd::kBFloat16, TYPE, NAME, __VA_ARGS__)
// clang-format on

namespace opd::common {

// Calls f(T{}) with the C++ type of `dtype` (Half and BFloat16 as Half / BFloat16),
// complex types only when kComplex; otherwise throws Error "\"op\" not implemented for
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
