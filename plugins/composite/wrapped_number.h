// PyTorch's wrapped_scalar_tensor, for the composites that take a number where the kernel takes
// a tensor (the `.Scalar` overloads of the binary operators, xlogy's).
#pragma once

#include "opd/ops.h"

namespace opd::native {

// Note [Wrapped numbers]
// PyTorch's wrapped_scalar_tensor: a 0-dim CPU tensor of the number's own kind (Bool, Long,
// Double or ComplexDouble) marked as a wrapped number. Type promotion ranks it below every
// tensor of the same category, so `int_tensor * 2.5` is Float, not Double, and `float_tensor
// + 1` stays Float; 0-dim CPU tensors combine with tensors on any device, so it needs no copy.
inline Tensor wrapped_scalar_tensor(const Scalar& s) {
  Tensor t = opd::scalar_tensor(s, s.type(), std::nullopt, Device(DeviceType::CPU), std::nullopt);
  t.unsafe_get_impl()->set_wrapped_number(true);
  return t;
}

}  // namespace opd::native
