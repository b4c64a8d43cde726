// The `.Scalar` overloads of the binary and comparison operators: the number becomes a tensor
// and the `.Tensor` overload runs, as in PyTorch.

#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// Note [Wrapped numbers]
// PyTorch's wrapped_scalar_tensor: a 0-dim CPU tensor of the number's own kind (Bool, Long,
// Double or ComplexDouble) marked as a wrapped number. Type promotion ranks it below every
// tensor of the same category, so `int_tensor * 2.5` is Float, not Double, and `float_tensor
// + 1` stays Float; 0-dim CPU tensors combine with tensors on any device, so it needs no copy.
Tensor wrapped_scalar_tensor(const Scalar& s) {
  Tensor t = opd::scalar_tensor(s, s.type(), std::nullopt, Device(DeviceType::CPU), std::nullopt);
  t.unsafe_get_impl()->set_wrapped_number(true);
  return t;
}

}  // namespace

Tensor add_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return opd::add(self, wrapped_scalar_tensor(other), alpha);
}

Tensor& add__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  self.add_(wrapped_scalar_tensor(other), alpha);
  return self;
}

Tensor sub_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return opd::sub(self, wrapped_scalar_tensor(other), alpha);
}

Tensor& sub__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  self.sub_(wrapped_scalar_tensor(other), alpha);
  return self;
}

Tensor mul_Scalar(const Tensor& self, const Scalar& other) {
  return opd::mul(self, wrapped_scalar_tensor(other));
}

Tensor& mul__Scalar(Tensor& self, const Scalar& other) {
  self.mul_(wrapped_scalar_tensor(other));
  return self;
}

Tensor div_Scalar(const Tensor& self, const Scalar& other) {
  return opd::div(self, wrapped_scalar_tensor(other));
}

Tensor& div__Scalar(Tensor& self, const Scalar& other) {
  self.div_(wrapped_scalar_tensor(other));
  return self;
}

Tensor eq_Scalar(const Tensor& self, const Scalar& other) {
  return opd::eq(self, wrapped_scalar_tensor(other));
}

Tensor ne_Scalar(const Tensor& self, const Scalar& other) {
  return opd::ne(self, wrapped_scalar_tensor(other));
}

Tensor lt_Scalar(const Tensor& self, const Scalar& other) {
  return opd::lt(self, wrapped_scalar_tensor(other));
}

Tensor le_Scalar(const Tensor& self, const Scalar& other) {
  return opd::le(self, wrapped_scalar_tensor(other));
}

Tensor gt_Scalar(const Tensor& self, const Scalar& other) {
  return opd::gt(self, wrapped_scalar_tensor(other));
}

Tensor ge_Scalar(const Tensor& self, const Scalar& other) {
  return opd::ge(self, wrapped_scalar_tensor(other));
}

}  // namespace opd::native
