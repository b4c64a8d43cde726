// The unary operators PyTorch writes over others: isnan (x != x), isinf (|x| is +inf), isfinite
// (x == x and |x| is not +inf; integers and bools are always finite), square (x ** 2; its
// in-place and out= forms write that result).

#include "common/output.h"
#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

bool has_infinities(const Tensor& self) {
  return is_floating_point(self.scalar_type()) || is_complex(self.scalar_type());
}

}  // namespace

Tensor isnan(const Tensor& self) { return opd::ne(self, self); }

Tensor isinf(const Tensor& self) {
  if (!has_infinities(self)) return opd::zeros_like(self, TensorOptions().dtype(kBool));
  return opd::isposinf(opd::abs(self));
}

Tensor isfinite(const Tensor& self) {
  if (!has_infinities(self)) return opd::ones_like(self, TensorOptions().dtype(kBool));
  return opd::mul(opd::eq(self, self), opd::logical_not(opd::isposinf(opd::abs(self))));
}

Tensor square(const Tensor& self) { return opd::pow(self, 2); }

Tensor& square_(Tensor& self) {
  self.copy_(opd::pow(self, 2));
  return self;
}

Tensor& square_out(const Tensor& self, Tensor& out) {
  const Tensor result = opd::pow(self, 2);
  common::resize_output("square", out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace opd::native
