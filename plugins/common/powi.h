#pragma once

// Integer powers as PyTorch's powi computes them: repeated squaring that wraps as unsigned
// arithmetic does; a negative exponent gives 0 unless the base is 1 or -1. Header-only and free
// of host-only calls, so that the CPU and CUDA kernels share it.

#include <type_traits>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define OPD_POWI_HD __host__ __device__
#else
#define OPD_POWI_HD
#endif

namespace opd::common {

template <class T>
OPD_POWI_HD T powi(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 != 0) ? T(-1) : T(1);
      return 0;
    }
  }
  using U = std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>;
  U result = 1, b = static_cast<U>(base);
  for (auto e = static_cast<U>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

}  // namespace opd::common
