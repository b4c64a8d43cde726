// xlogy's overloads with a number, CompositeExplicitAutograd as PyTorch's: the number becomes a
// wrapped-number tensor (Note [Wrapped numbers] in scalar_composites.cpp) and xlogy.Tensor (or
// its in-place and out= forms) runs; their derivatives are their own entries.

#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// A 0-dim CPU tensor of the number's own kind, marked a wrapped number.
Tensor wrapped(const Scalar& s) {
  Tensor t = opd::scalar_tensor(s, s.type(), std::nullopt, Device(DeviceType::CPU), std::nullopt);
  t.unsafe_get_impl()->set_wrapped_number(true);
  return t;
}

}  // namespace

Tensor xlogy_Scalar_Self(const Scalar& self, const Tensor& other) {
  return opd::xlogy(wrapped(self), other);
}

Tensor xlogy_Scalar_Other(const Tensor& self, const Scalar& other) {
  return opd::xlogy(self, wrapped(other));
}

Tensor& xlogy__Scalar_Other(Tensor& self, const Scalar& other) {
  return opd::xlogy_(self, wrapped(other));
}

Tensor& xlogy_OutScalar_Self(const Scalar& self, const Tensor& other, Tensor& out) {
  return opd::xlogy_outf(wrapped(self), other, out);
}

Tensor& xlogy_OutScalar_Other(const Tensor& self, const Scalar& other, Tensor& out) {
  return opd::xlogy_outf(self, wrapped(other), out);
}

}  // namespace opd::native
