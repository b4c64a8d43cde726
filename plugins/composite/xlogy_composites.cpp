// xlogy's overloads with a number, CompositeExplicitAutograd as PyTorch's: the number becomes a
// wrapped-number tensor (Note [Wrapped numbers] in wrapped_number.h) and xlogy.Tensor (or
// its in-place and out= forms) runs; their derivatives are their own entries.

#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"
#include "wrapped_number.h"

namespace opd::native {

Tensor xlogy_Scalar_Self(const Scalar& self, const Tensor& other) {
  return opd::xlogy(wrapped_scalar_tensor(self), other);
}

Tensor xlogy_Scalar_Other(const Tensor& self, const Scalar& other) {
  return opd::xlogy(self, wrapped_scalar_tensor(other));
}

Tensor& xlogy__Scalar_Other(Tensor& self, const Scalar& other) {
  return opd::xlogy_(self, wrapped_scalar_tensor(other));
}

Tensor& xlogy_OutScalar_Self(const Scalar& self, const Tensor& other, Tensor& out) {
  return opd::xlogy_outf(wrapped_scalar_tensor(self), other, out);
}

Tensor& xlogy_OutScalar_Other(const Tensor& self, const Scalar& other, Tensor& out) {
  return opd::xlogy_outf(self, wrapped_scalar_tensor(other), out);
}

}  // namespace opd::native
