// The impls of the unary groups that keep self's dtype or test values: floor, ceil, round (to
// nearest even, as torch.round; round.decimals), trunc, frac, sign, sgn, bitwise_not,
// nan_to_num; and isposinf, isneginf and logical_not, which write Bool. The rounding functions
// leave integers as they are.

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "cpu/elementwise_loops.h"
#include "cpu/unary_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;
using cpu::cpu_kernel;
using cpu::opmath;
using cpu::vec::VecOp;

template <class T>
constexpr bool kIsFloat16 = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// floor, ceil, round, trunc: integral dtypes copy, floating ones round (vectorised when dense).
template <class F>
void rounding_kernel(const TensorIterator& iter, std::string_view name, VecOp op, const F& f) {
  if (is_integral(iter.common_dtype(), /*include_bool=*/false)) {
    OPD_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), name, [&] {
      cpu_kernel(iter, [](scalar_t x) -> scalar_t { return x; });
    });
    return;
  }
  cpu::floating_unary_kernel(iter, name, op, f);
}

// The largest finite value of T and its lowest, as numeric_limits for Half and BFloat16 too.
template <class T>
float largest_float16() {
  return std::is_same_v<T, Half> ? 65504.0f : 3.38953139e38f;
}

template <class T>
T bitwise_not_value(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return !x;
  } else {
    return static_cast<T>(~x);
  }
}

}  // namespace

void floor_out(const TensorIterator& iter, const Tensor&) {
  rounding_kernel(iter, "floor_vml_cpu", VecOp::Floor, [](auto x) { return std::floor(x); });
}
void ceil_out(const TensorIterator& iter, const Tensor&) {
  rounding_kernel(iter, "ceil_vml_cpu", VecOp::Ceil, [](auto x) { return std::ceil(x); });
}
void round_out(const TensorIterator& iter, const Tensor&) {
  rounding_kernel(iter, "round_vml_cpu", VecOp::Round, [](auto x) { return std::nearbyint(x); });
}
void trunc_out(const TensorIterator& iter, const Tensor&) {
  rounding_kernel(iter, "trunc_vml_cpu", VecOp::Trunc, [](auto x) { return std::trunc(x); });
}
void frac_out(const TensorIterator& iter, const Tensor&) {
  cpu::floating_unary_kernel(iter, "frac_cpu", std::nullopt,
                             [](auto x) { return x - std::trunc(x); });
}

// As PyTorch: x * 10^d rounded, divided back; for d < 0, x / 10^-d rounded, multiplied back.
void round_decimals_out(const TensorIterator& iter, const Tensor&, int64_t decimals) {
  const bool negative = decimals < 0;
  const double ten_pow = std::pow(10.0, static_cast<double>(negative ? -decimals : decimals));
  cpu::floating_unary_kernel(iter, "round_cpu", std::nullopt, [negative, ten_pow](auto x) {
    using T = decltype(x);
    const auto p = static_cast<T>(ten_pow);
    return negative ? std::nearbyint(x / p) * p : std::nearbyint(x * p) / p;
  });
}

// -1, 0 or 1 (NaN, -0.0 and 0.0 give 0, as PyTorch 1.13's); a bool is its own sign.
void sign_out(const TensorIterator& iter, const Tensor&) {
  OPD_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(), "sign_cpu", [&] {
    cpu_kernel(iter, [](scalar_t x) -> scalar_t {
      if constexpr (std::is_same_v<scalar_t, bool>) {
        return x;
      } else {
        using V = decltype(opmath(x));
        const V v = opmath(x);
        return static_cast<scalar_t>(static_cast<V>((V(0) < v) - (v < V(0))));
      }
    });
  });
}
// sgn is sign for real numbers (complex tensors are not supported here).
void sgn_out(const TensorIterator& iter, const Tensor& self) { sign_out(iter, self); }

void bitwise_not_out(const TensorIterator& iter, const Tensor&) {
  OPD_DISPATCH_INTEGRAL_TYPES_AND(kBool, iter.common_dtype(), "bitwise_not_cpu", [&] {
    cpu_kernel(iter, [](scalar_t x) -> scalar_t { return bitwise_not_value(x); });
  });
}

void logical_not_out(const TensorIterator& iter, const Tensor&) {
  OPD_DISPATCH_EVERY_TYPE(iter.common_dtype(), "logical_not_cpu", [&] {
    cpu_kernel(iter, [](scalar_t x) -> bool { return opmath(x) == decltype(opmath(x))(0); });
  });
}

// Whether x is +inf (isposinf) or -inf (isneginf); never for integers and bools.
template <bool kNegative>
void inf_test(const TensorIterator& iter, std::string_view name) {
  OPD_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(), name, [&] {
    cpu_kernel(iter, [](scalar_t x) -> bool {
      using V = decltype(opmath(x));
      const V v = opmath(x);
      if constexpr (std::is_floating_point_v<V>) {
        return kNegative ? v == -std::numeric_limits<V>::infinity()
                         : v == std::numeric_limits<V>::infinity();
      } else {
        return false;
      }
    });
  });
}
void isposinf_out(const TensorIterator& iter, const Tensor&) {
  inf_test<false>(iter, "isposinf_cpu");
}
void isneginf_out(const TensorIterator& iter, const Tensor&) {
  inf_test<true>(iter, "isneginf_cpu");
}

// NaN becomes `nan` (0 by default), +inf `posinf` and -inf `neginf` (by default the largest and
// lowest finite values of the dtype); integers and bools are copied.
void nan_to_num_out(const TensorIterator& iter, const Tensor&, std::optional<double> nan,
                    std::optional<double> posinf, std::optional<double> neginf) {
  OPD_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(), "nan_to_num", [&] {
    if constexpr (!std::is_floating_point_v<decltype(opmath(scalar_t()))>) {
      cpu_kernel(iter, [](scalar_t x) -> scalar_t { return x; });
    } else {
      using V = decltype(opmath(scalar_t()));
      V largest;
      if constexpr (kIsFloat16<scalar_t>) {
        largest = largest_float16<scalar_t>();
      } else {
        largest = std::numeric_limits<V>::max();
      }
      const V nan_value = static_cast<V>(nan.value_or(0.0));
      const V pos = posinf ? static_cast<V>(*posinf) : largest;
      const V neg = neginf ? static_cast<V>(*neginf) : -largest;
      cpu_kernel(iter, [nan_value, pos, neg](scalar_t x) -> scalar_t {
        const V v = opmath(x);
        if (std::isnan(v)) return static_cast<scalar_t>(nan_value);
        if (v == std::numeric_limits<V>::infinity()) return static_cast<scalar_t>(pos);
        if (v == -std::numeric_limits<V>::infinity()) return static_cast<scalar_t>(neg);
        return x;
      });
    }
  });
}

}  // namespace opd::native
