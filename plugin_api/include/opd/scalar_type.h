#pragma once

#include <fmt/format.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "opd/export.h"

namespace opd {

// The element type of a tensor (PyTorch's dtype). Values are stable: they index tables in the
// core and in plugins.
enum class ScalarType : int8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  ComplexFloat,
  ComplexDouble,
  Undefined,
};
inline constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);

// ATen's short names.
inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kByte = ScalarType::UInt8;
inline constexpr ScalarType kChar = ScalarType::Int8;
inline constexpr ScalarType kShort = ScalarType::Int16;
inline constexpr ScalarType kInt = ScalarType::Int32;
inline constexpr ScalarType kLong = ScalarType::Int64;
inline constexpr ScalarType kHalf = ScalarType::Float16;
inline constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
inline constexpr ScalarType kFloat = ScalarType::Float32;
inline constexpr ScalarType kDouble = ScalarType::Float64;
inline constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat;
inline constexpr ScalarType kComplexDouble = ScalarType::ComplexDouble;

// Bytes per element; 0 for Undefined.
namespace detail {
// At namespace scope, so that the table is read from memory rather than built on the stack at
// every call (a constexpr function may not hold a static local before C++23).
inline constexpr uint8_t kElementSizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, 0};
}  // namespace detail
constexpr size_t element_size(ScalarType t) { return detail::kElementSizes[static_cast<int>(t)]; }
// Float16, BFloat16, Float32, Float64 (complex types are not floating point, as in PyTorch).
constexpr bool is_floating_point(ScalarType t) {
  return t >= ScalarType::Float16 && t <= ScalarType::Float64;
}
// UInt8 .. Int64, and Bool when include_bool.
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return (t >= ScalarType::UInt8 && t <= ScalarType::Int64) ||
         (include_bool && t == ScalarType::Bool);
}
constexpr bool is_complex(ScalarType t) {
  return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble;
}

// c10's name: "Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float",
// "Double", "ComplexFloat", "ComplexDouble", "Undefined".
OPD_API const char* to_string(ScalarType t);
// Python's name without "torch.": "bool", "uint8", ..., "float32", "complex64"; "undefined".
OPD_API const char* python_name(ScalarType t);
// Accepts the Python names ("float32"), their aliases (float, double, half, long, int, short,
// cfloat, cdouble, complex64, complex128), c10's names ("Float", "Long") and the enumerator names
// ("Float32"), each optionally prefixed by "torch.". Throws ValueError naming the text otherwise.
OPD_API ScalarType parse_scalar_type(std::string_view name);
// PyTorch's type promotion lattice (torch.promote_types) restricted to these types: integers of
// different signedness meet in the next wider signed type (uint8 + int8 = int16), Half with
// BFloat16 gives Float, a real floating type with a complex one gives the complex type wide
// enough for both (double + complex64 = complex128). Undefined with anything gives Undefined.
OPD_API ScalarType promote_types(ScalarType a, ScalarType b);

inline std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << to_string(t); }

// The ScalarType of a C++ element type. Only the ten types with an exact C++ counterpart map;
// any other T (including `char`, `long long` and the 16-bit floats) fails to compile.
template <class T>
constexpr ScalarType cpp_type_to_scalar_type() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return ScalarType::Bool;
  else if constexpr (std::is_same_v<U, uint8_t>)
    return ScalarType::UInt8;
  else if constexpr (std::is_same_v<U, int8_t>)
    return ScalarType::Int8;
  else if constexpr (std::is_same_v<U, int16_t>)
    return ScalarType::Int16;
  else if constexpr (std::is_same_v<U, int32_t>)
    return ScalarType::Int32;
  else if constexpr (std::is_same_v<U, int64_t>)
    return ScalarType::Int64;
  else if constexpr (std::is_same_v<U, float>)
    return ScalarType::Float32;
  else if constexpr (std::is_same_v<U, double>)
    return ScalarType::Float64;
  else if constexpr (std::is_same_v<U, std::complex<float>>)
    return ScalarType::ComplexFloat;
  else if constexpr (std::is_same_v<U, std::complex<double>>)
    return ScalarType::ComplexDouble;
  else
    static_assert(sizeof(T) == 0, "no ScalarType corresponds to this C++ type");
}

// The C++ element type of a ScalarType, for the ten types that have one (kernels dispatching on
// dtype use it): ScalarTypeToCpp<kFloat>::type is float.
template <ScalarType S>
struct ScalarTypeToCpp;
#define OPD_SCALAR_TYPE_TO_CPP(S, T) \
  template <>                        \
  struct ScalarTypeToCpp<S> {        \
    using type = T;                  \
  };
OPD_SCALAR_TYPE_TO_CPP(ScalarType::Bool, bool)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::UInt8, uint8_t)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::Int8, int8_t)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::Int16, int16_t)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::Int32, int32_t)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::Int64, int64_t)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::Float32, float)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::Float64, double)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::ComplexFloat, std::complex<float>)
OPD_SCALAR_TYPE_TO_CPP(ScalarType::ComplexDouble, std::complex<double>)
#undef OPD_SCALAR_TYPE_TO_CPP

}  // namespace opd

// fmt::format("{}", kFloat) prints "Float".
template <>
struct fmt::formatter<opd::ScalarType> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(opd::ScalarType t, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(opd::to_string(t), ctx);
  }
};
