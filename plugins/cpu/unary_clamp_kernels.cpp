// The impls of clamp, clamp_min and clamp_max, with Scalar bounds (computing in self's dtype or
// its promotion with the bounds) and with Tensor bounds (inputs promoted together). A NaN input
// stays NaN; with Tensor bounds a NaN bound gives NaN too (clamp_min and clamp_max are maximum
// and minimum there), as in PyTorch; min > max gives max.

#include <cmath>
#include <optional>
#include <type_traits>

#include "common/type_dispatch.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cpu::cpu_kernel;

template <class T>
bool is_nan(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return std::isnan(static_cast<float>(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// max(x, lo) and min(x, hi) keeping a NaN x: `x < lo` is false for NaN.
template <class T>
T at_least(T x, T lo) {
  return x < lo ? lo : x;
}
template <class T>
T at_most(T x, T hi) {
  return hi < x ? hi : x;
}

// maximum / minimum as clamp_min.Tensor and clamp_max.Tensor compute them: NaN on either side
// wins; bools by logical or / and.
template <bool kMax, class T>
T extremum(T x, T bound) {
  if constexpr (std::is_same_v<T, bool>) {
    return kMax ? (x || bound) : (x && bound);
  } else {
    if (is_nan(x)) return x;
    if (is_nan(bound)) return bound;
    return kMax ? at_least(x, bound) : at_most(x, bound);
  }
}

}  // namespace

void clamp_out(const TensorIterator& iter, const Tensor&, const std::optional<Scalar>& min,
               const std::optional<Scalar>& max) {
  OPD_DISPATCH_ALL_TYPES_AND(kBFloat16, iter.common_dtype(), "clamp_scalar_cpu", [&] {
    if (min && max) {
      const auto lo = common::scalar_to<scalar_t>(*min), hi = common::scalar_to<scalar_t>(*max);
      cpu_kernel(iter, [lo, hi](scalar_t x) -> scalar_t { return at_most(at_least(x, lo), hi); });
    } else if (min) {
      const auto lo = common::scalar_to<scalar_t>(*min);
      cpu_kernel(iter, [lo](scalar_t x) -> scalar_t { return at_least(x, lo); });
    } else {
      const auto hi = common::scalar_to<scalar_t>(*max);
      cpu_kernel(iter, [hi](scalar_t x) -> scalar_t { return at_most(x, hi); });
    }
  });
}

void clamp_min_out(const TensorIterator& iter, const Tensor& self, const Scalar& min) {
  clamp_out(iter, self, min, std::nullopt);
}
void clamp_max_out(const TensorIterator& iter, const Tensor& self, const Scalar& max) {
  clamp_out(iter, self, std::nullopt, max);
}

void clamp_Tensor_out(const TensorIterator& iter, const Tensor&, const std::optional<Tensor>& min,
                      const std::optional<Tensor>& max) {
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  OPD_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(), "clamp_cpu", [&] {
    if (has_min && has_max) {
      cpu_kernel(iter, [](scalar_t x, scalar_t lo, scalar_t hi) -> scalar_t {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          return (x || lo) && hi;
        } else {
          if (is_nan(lo)) return lo;
          if (is_nan(hi)) return hi;
          return at_most(at_least(x, lo), hi);
        }
      });
    } else if (has_min) {
      cpu_kernel(iter, [](scalar_t x, scalar_t lo) -> scalar_t { return extremum<true>(x, lo); });
    } else {
      cpu_kernel(iter, [](scalar_t x, scalar_t hi) -> scalar_t { return extremum<false>(x, hi); });
    }
  });
}

void clamp_min_Tensor_out(const TensorIterator& iter, const Tensor& self, const Tensor& min) {
  clamp_Tensor_out(iter, self, min, std::nullopt);
}
void clamp_max_Tensor_out(const TensorIterator& iter, const Tensor& self, const Tensor& max) {
  clamp_Tensor_out(iter, self, std::nullopt, max);
}

}  // namespace opd::native
