// Element conversion between the CPU plugin's dtypes, as PyTorch's static_cast_with_inter_type:
// the one cast that copy_, cat and the reductions use.

#pragma once

#include <complex>
#include <type_traits>

#include "opd/half.h"

namespace opd::cpu {

template <class T>
inline constexpr bool kIsComplex = false;
template <class T>
inline constexpr bool kIsComplex<std::complex<T>> = true;
template <class T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// A real value as an arithmetic type (the 16-bit floats as float).
template <class T>
auto arithmetic(T v) {
  if constexpr (kIsHalfLike<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// C++'s conversions, as PyTorch's copy does them: to bool is "non-zero"; complex to real keeps
// the real part; the 16-bit floats go through float.
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsComplex<From>) {
      return v.real() != 0 || v.imag() != 0;
    } else {
      return arithmetic(v) != 0;
    }
  } else if constexpr (kIsComplex<From>) {
    if constexpr (kIsComplex<To>) {
      return To(static_cast<typename To::value_type>(v.real()),
                static_cast<typename To::value_type>(v.imag()));
    } else {
      return convert<To>(v.real());
    }
  } else if constexpr (kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(arithmetic(v)));
  } else if constexpr (kIsHalfLike<To>) {
    return To(static_cast<float>(arithmetic(v)));
  } else {
    return static_cast<To>(arithmetic(v));
  }
}

}  // namespace opd::cpu
