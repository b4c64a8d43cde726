#pragma once

#include <fmt/format.h>

#include <cmath>
#include <complex>
#include <concepts>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>

#include "opd/error.h"
#include "opd/export.h"
#include "opd/scalar_type.h"

namespace opd {

namespace detail {
// bool is not one: it converts to a boolean Scalar or IValue, never to an integer.
template <class T>
concept NonBoolIntegral = std::integral<T> && !std::same_as<T, bool>;
template <class T>
inline constexpr bool kIsComplex = false;
template <class T>
inline constexpr bool kIsComplex<std::complex<T>> = true;
// Throws opd::Error (RuntimeError in Python) "value cannot be converted to type <type_name>
// without overflow", as c10::checked_convert.
[[noreturn]] OPD_API void throw_scalar_overflow(const char* type_name);
}  // namespace detail

// A number of unknown type: what the schema type `Scalar` carries (the `alpha` of add, the
// `other` of add.Scalar). Holds exactly one of bool, int64_t, double or std::complex<double>,
// chosen by the constructor; it never changes. A plain value: cheap to copy, thread-compatible.
class OPD_API Scalar {
 public:
  // 0, an integer.
  Scalar() noexcept : tag_(Tag::Int) { v_.i = 0; }
  Scalar(bool v) noexcept : tag_(Tag::Bool) { v_.b = v; }
  // Any integer type. Throws ValueError for an unsigned 64-bit value above INT64_MAX.
  template <detail::NonBoolIntegral T>
  Scalar(T v) : tag_(Tag::Int) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        detail::throw_scalar_overflow("int64_t");
      }
    }
    v_.i = static_cast<int64_t>(v);
  }
  template <std::floating_point T>
  Scalar(T v) noexcept : tag_(Tag::Double) {
    v_.d = static_cast<double>(v);
  }
  template <std::floating_point T>
  Scalar(std::complex<T> v) noexcept : tag_(Tag::ComplexDouble) {
    v_.z = {static_cast<double>(v.real()), static_cast<double>(v.imag())};
  }
  // A pointer would otherwise become a bool.
  template <class T>
  Scalar(T*) = delete;

  // PyTorch's isIntegral(include_bool): an integer, or a bool when include_bool.
  bool is_integral(bool include_bool) const {
    return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool);
  }
  bool is_floating_point() const { return tag_ == Tag::Double; }
  bool is_complex() const { return tag_ == Tag::ComplexDouble; }
  bool is_boolean() const { return tag_ == Tag::Bool; }
  // Long, Double, Bool or ComplexDouble.
  ScalarType type() const {
    static constexpr ScalarType kTypes[] = {ScalarType::Bool, ScalarType::Int64,
                                            ScalarType::Float64, ScalarType::ComplexDouble};
    return kTypes[static_cast<int>(tag_)];
  }

  // The value converted to T (bool, any integer or floating type, std::complex<float|double>),
  // with c10::checked_convert's rules: throws ValueError "value cannot be converted to type
  // int8_t without overflow" when the value does not fit (a complex with a non-zero imaginary
  // part into a real type, NaN or an out-of-range value into an integer, a finite double beyond
  // float's range into float). Negative integers wrap into unsigned types down to -max, as in
  // PyTorch (Scalar(-1).to<uint8_t>() is 255); doubles truncate toward zero into integers.
  template <class T>
  T to() const;
  int64_t to_int64() const { return to<int64_t>(); }
  double to_double() const { return to<double>(); }
  bool to_bool() const { return to<bool>(); }
  std::complex<double> to_complex_double() const { return to<std::complex<double>>(); }

  // Python's repr of the value: "3", "2.5", "2.0", "1e-05", "inf", "True", "(1+2j)".
  std::string str() const;

  // Same type and same value (so Scalar(1) != Scalar(1.0), and NaN != NaN).
  bool operator==(const Scalar& o) const;

 private:
  enum class Tag : uint8_t { Bool, Int, Double, ComplexDouble };  // order indexes type()
  template <class To, class From>
  static To convert(From f);

  Tag tag_;
  union {
    bool b;
    int64_t i;
    double d;
    struct {
      double re, im;
    } z;
  } v_;  // the member named by tag_ is the live one
};

inline std::ostream& operator<<(std::ostream& out, const Scalar& s) { return out << s.str(); }

namespace detail {
template <class T>
constexpr const char* cpp_type_name() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return "bool";
  else if constexpr (std::is_same_v<U, float>)
    return "float";
  else if constexpr (std::is_same_v<U, double>)
    return "double";
  else if constexpr (std::is_same_v<U, long double>)
    return "long double";
  else if constexpr (std::is_same_v<U, std::complex<float>>)
    return "std::complex<float>";
  else if constexpr (std::is_same_v<U, std::complex<double>>)
    return "std::complex<double>";
  else if constexpr (std::is_integral_v<U>) {
    constexpr const char* kSigned[] = {"int8_t", "int16_t", "int32_t", "int64_t"};
    constexpr const char* kUnsigned[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t"};
    constexpr int i = sizeof(U) == 1 ? 0 : sizeof(U) == 2 ? 1 : sizeof(U) == 4 ? 2 : 3;
    return std::is_signed_v<U> ? kSigned[i] : kUnsigned[i];
  } else {
    return "unknown";
  }
}
}  // namespace detail

// Conversion of one real value; see to<T>() for the rules.
template <class To, class From>
To Scalar::convert(From f) {
  if constexpr (std::is_same_v<To, bool>) {
    // Never an overflow, as c10::checked_convert: any non-zero value (NaN too) is true, so
    // that fill_(2) on a bool tensor fills True.
    return f != From(0);
  } else if constexpr (std::is_integral_v<To>) {
    using L = std::numeric_limits<To>;
    bool overflow = false;
    if constexpr (std::is_same_v<From, bool>) {
      overflow = false;
    } else if constexpr (std::is_integral_v<From>) {
      if constexpr (std::is_unsigned_v<To>) {
        // Negative values wrap, as c10::overflows allows for unsigned targets.
        uint64_t magnitude =
            f < 0 ? uint64_t{0} - static_cast<uint64_t>(f) : static_cast<uint64_t>(f);
        overflow = magnitude > static_cast<uint64_t>(L::max());
      } else {
        overflow = f < static_cast<int64_t>(L::min()) || f > static_cast<int64_t>(L::max());
      }
    } else {
      // 2^digits is exactly representable; comparing with L::max() as a double would round
      // INT64_MAX up to 2^63 and let 2^63 through.
      const double upper = std::ldexp(1.0, L::digits);
      overflow = std::isnan(f) || f < static_cast<double>(L::min()) || f >= upper;
    }
    if (overflow) detail::throw_scalar_overflow(detail::cpp_type_name<To>());
    return static_cast<To>(f);
  } else {
    static_assert(std::is_floating_point_v<To>, "Scalar::to<T>: unsupported type");
    if constexpr (std::is_floating_point_v<From> && sizeof(To) < sizeof(From)) {
      using L = std::numeric_limits<To>;
      if (std::isfinite(f) && (f < L::lowest() || f > L::max())) {
        detail::throw_scalar_overflow(detail::cpp_type_name<To>());
      }
    }
    return static_cast<To>(f);
  }
}

template <class T>
T Scalar::to() const {
  using U = std::remove_cv_t<T>;
  if constexpr (detail::kIsComplex<U>) {
    using R = typename U::value_type;
    switch (tag_) {
      case Tag::Bool:
        return U(convert<R>(v_.b), R(0));
      case Tag::Int:
        return U(convert<R>(v_.i), R(0));
      case Tag::Double:
        return U(convert<R>(v_.d), R(0));
      case Tag::ComplexDouble:
        if constexpr (std::is_same_v<R, double>)
          return U(v_.z.re, v_.z.im);
        else {
          using L = std::numeric_limits<R>;
          auto fits = [](double x) {
            return !std::isfinite(x) || (x >= L::lowest() && x <= L::max());
          };
          if (!fits(v_.z.re) || !fits(v_.z.im)) {
            detail::throw_scalar_overflow(detail::cpp_type_name<U>());
          }
          return U(static_cast<R>(v_.z.re), static_cast<R>(v_.z.im));
        }
    }
  } else {
    static_assert(std::is_arithmetic_v<U>, "Scalar::to<T>: T must be arithmetic or complex");
    switch (tag_) {
      case Tag::Bool:
        return convert<U>(v_.b);
      case Tag::Int:
        return convert<U>(v_.i);
      case Tag::Double:
        return convert<U>(v_.d);
      case Tag::ComplexDouble:
        if (v_.z.im != 0) detail::throw_scalar_overflow(detail::cpp_type_name<U>());
        return convert<U>(v_.z.re);
    }
  }
  __builtin_unreachable();
}

}  // namespace opd

template <>
struct fmt::formatter<opd::Scalar> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(const opd::Scalar& s, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(s.str(), ctx);
  }
};
