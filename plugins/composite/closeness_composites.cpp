// isclose and allclose as PyTorch's decompositions: |self - other| <= atol + rtol * |other|,
// element by element, with exact equality (and NaN == NaN when equal_nan) counted as close.
// The logical or/and of the boolean masks are `where` (where(a, a, b) is a or b, where(a, b, a)
// is a and b), so only comparisons, abs, sub, mul and where are needed.

#include <limits>

#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

Tensor either(const Tensor& a, const Tensor& b) { return opd::where(a, a, b); }
Tensor both(const Tensor& a, const Tensor& b) { return opd::where(a, b, a); }

}  // namespace

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  OPD_CHECK(self.scalar_type() == other.scalar_type(), "{} did not match {}", self.scalar_type(),
            other.scalar_type());
  OPD_CHECK(!(is_complex(self.scalar_type()) && equal_nan),
            "isclose with equal_nan=True is not supported for complex inputs.");
  OPD_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got {}", rtol);
  OPD_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got {}", atol);

  Tensor close = opd::eq(self, other);
  if (equal_nan && is_floating_point(self.scalar_type())) {
    close = either(close, both(opd::ne(self, self), opd::ne(other, other)));
  }
  if (rtol == 0 && atol == 0) return close;

  // Integral and bool operands are compared in the default dtype, as PyTorch's, so that their
  // difference cannot wrap around.
  const bool exact = !is_floating_point(self.scalar_type()) && !is_complex(self.scalar_type());
  const Tensor cast_self = exact ? self.to(kFloat) : self;
  const Tensor cast_other = exact ? other.to(kFloat) : other;
  const Tensor allowed_error = opd::add(opd::abs(opd::mul(cast_other, rtol)), atol);
  const Tensor actual_error = opd::abs(opd::sub(cast_self, cast_other));
  // isfinite(actual_error): it is never negative, and NaN fails the <= below.
  const Tensor finite = opd::ne(actual_error, std::numeric_limits<double>::infinity());
  return either(close, both(finite, opd::le(actual_error, allowed_error)));
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  const Tensor close = opd::isclose(self, other, rtol, atol, equal_nan);
  return opd::sum(close).item().to<int64_t>() == close.numel();
}

}  // namespace opd::native
