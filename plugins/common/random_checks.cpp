#include "common/random_checks.h"

#include <cmath>
#include <limits>

#include "common/type_dispatch.h"
#include "common/view_shape.h"
#include "opd/error.h"
#include "opd/half.h"

namespace opd::common {
namespace {

constexpr TypeSet kFloatingAndHalves = TypeSet::Floating.with(kHalf, kBFloat16);

// PyTorch's names for the C++ types in its bounds errors (c10::demangle_type).
const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case kBool:
      return "bool";
    case kByte:
      return "unsigned char";
    case kChar:
      return "signed char";
    case kShort:
      return "short";
    case kInt:
      return "int";
    case kLong:
      return "long";
    case kHalf:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kFloat:
      return "float";
    default:
      return "double";
  }
}

// The lowest and largest finite values of a dtype, and for floating dtypes the number of
// significand digits (std::numeric_limits<T>::digits).
struct Limits {
  double lowest, max;
  int digits;
};
Limits limits_of(ScalarType t) {
  switch (t) {
    case kHalf:
      return {-65504.0, 65504.0, 11};
    case kBFloat16:
      return {-3.38953138925153547590470800371487866880e+38,
              3.38953138925153547590470800371487866880e+38, 8};
    case kFloat:
      return {std::numeric_limits<float>::lowest(), std::numeric_limits<float>::max(), 24};
    case kDouble:
      return {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max(), 53};
    default:
      return {0, 0, 0};
  }
}

}  // namespace

void check_random_floating(std::string_view kernel, ScalarType dtype) {
  check_dtype_in(kernel, dtype, kFloatingAndHalves);
}

void check_random_numeric(std::string_view kernel, ScalarType dtype, bool bool_too) {
  check_dtype_in(
      kernel, dtype,
      bool_too ? TypeSet::AllAndBool.with(kHalf, kBFloat16) : TypeSet::All.with(kHalf, kBFloat16));
}

ScalarType random_value_type(ScalarType dtype) {
  if (dtype == kComplexFloat) return kFloat;
  if (dtype == kComplexDouble) return kDouble;
  return dtype;
}

void check_uniform(ScalarType dtype, double from, double to) {
  check_random_floating("check_uniform_bounds", dtype);
  const Limits l = limits_of(dtype);
  OPD_CHECK(from >= l.lowest && from <= l.max, "from is out of bounds for {}",
            cpp_type_name(dtype));
  OPD_CHECK(to >= l.lowest && to <= l.max, "to is out of bounds for {}", cpp_type_name(dtype));
  OPD_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from={} > to={}",
            from, to);
  OPD_CHECK(to - from <= l.max,
            "uniform_ expects to-from <= std::numeric_limits<{}>::max(), but found to={} and "
            "from={} which result in to-from to exceed the limit",
            to_string(dtype), to, from);
}

void check_normal_std(double std) {
  OPD_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std {}", std);
}

void check_bernoulli_p(double p) {
  OPD_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p={}", p);
}

void check_bernoulli_self(std::string_view kernel, ScalarType dtype) {
  check_dtype_in(kernel, dtype, TypeSet::AllAndBool.with(kBFloat16));
}

std::vector<int64_t> check_bernoulli_tensor(const Tensor& self, const Tensor& p) {
  StridedGeometry expanded =
      expand_geometry(geometry_of(p), self.sizes(), p.scalar_type(), p.device());
  check_bernoulli_self("bernoulli_tensor_cpu_self_", self.scalar_type());
  check_dtype_in("bernoulli_tensor_cpu_p_", p.scalar_type(), TypeSet::Floating.with(kBFloat16));
  return std::move(expanded.strides);
}

std::vector<int64_t> check_multinomial(const Tensor& self, int64_t n_sample, bool replacement,
                                       ScalarType out_dtype) {
  OPD_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  OPD_CHECK(is_floating_point(self.scalar_type()),
            "multinomial only supports floating-point dtypes for input, got: {}",
            to_string(self.scalar_type()));
  OPD_CHECK(out_dtype == kLong, "multinomial expects Long tensor out, got: {}",
            to_string(out_dtype));
  OPD_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  const int64_t categories = self.size(-1);
  OPD_CHECK(replacement || n_sample <= categories,
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  OPD_CHECK(categories <= (int64_t{1} << 24), "number of categories cannot exceed 2^24");
  OPD_CHECK(self.scalar_type() != kHalf, "multinomial is not implemented for half on CPU");
  if (self.dim() == 1) return {n_sample};
  return {self.size(0), n_sample};
}

void check_exponential(double lambd) {
  OPD_CHECK(lambd >= 0.0, "exponential_ expects lambda >= 0.0, but found lambda={}", lambd);
}

void check_geometric(double p) {
  OPD_CHECK(p > 0 && p < 1, "geometric_ expects p to be in (0, 1), but got p={}", p);
}

void check_log_normal(double std) {
  OPD_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std={}", std);
}

// Note [random_ ranges]
// As PyTorch 1.13: random_() draws from [0, 2^digits] for a floating dtype (every integer there
// is exact) and [0, max] for an integral one ([0, 1] for bool); random_.from without `to` draws
// from [from, 2^digits] or [from, max]; with `to`, from [from, to). Both ends must lie within the
// dtype's range (for floating dtypes its finite range).
RandomRange random_range(ScalarType dtype, std::optional<int64_t> from, std::optional<int64_t> to) {
  if (!from && !to) {
    check_random_numeric("random_kernel_cpu", dtype, /*bool_too=*/true);
  } else {
    OPD_CHECK(!is_complex(dtype),
              "check_random_bounds handles only integral, floating-point and boolean types");
  }
  const int64_t lo = from.value_or(0);
  int64_t hi;  // inclusive
  if (to) {
    OPD_CHECK(lo < *to, "random_ expects 'from' to be less than 'to', but got from={} >= to={}", lo,
              *to);
    hi = *to - 1;
  } else if (is_floating_point(dtype)) {
    hi = int64_t{1} << limits_of(dtype).digits;
  } else {
    switch (dtype) {
      case kBool:
        hi = 1;
        break;
      case kByte:
        hi = std::numeric_limits<uint8_t>::max();
        break;
      case kChar:
        hi = std::numeric_limits<int8_t>::max();
        break;
      case kShort:
        hi = std::numeric_limits<int16_t>::max();
        break;
      case kInt:
        hi = std::numeric_limits<int32_t>::max();
        break;
      default:
        hi = std::numeric_limits<int64_t>::max();
    }
  }
  if (from || to) {
    double lowest, max;
    if (is_floating_point(dtype)) {
      const Limits l = limits_of(dtype);
      lowest = l.lowest;
      max = l.max;
    } else {
      switch (dtype) {
        case kBool:
          lowest = 0, max = 1;
          break;
        case kByte:
          lowest = 0, max = 255;
          break;
        case kChar:
          lowest = -128, max = 127;
          break;
        case kShort:
          lowest = -32768, max = 32767;
          break;
        case kInt:
          lowest = -2147483648.0, max = 2147483647.0;
          break;
        default:
          lowest = -9223372036854775808.0, max = 9223372036854775807.0;
      }
    }
    const char* name = cpp_type_name(dtype);
    OPD_CHECK(static_cast<double>(lo) >= lowest && static_cast<double>(lo) <= max,
              "from is out of bounds for {}", name);
    OPD_CHECK(static_cast<double>(hi) >= lowest && static_cast<double>(hi) <= max,
              "to - 1 is out of bounds for {}", name);
    OPD_CHECK(lo <= hi,
              "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
              "casted to dtype, but got from={} > to_inc={}",
              lo, hi);
  }
  return {lo, static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1};
}

}  // namespace opd::common
