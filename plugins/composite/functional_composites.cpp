// The functional forms of in-place operators, as PyTorch 1.13's CompositeExplicitAutograd
// kernels: fill (a new tensor like self, filled) and copy (a new tensor like self, with src
// copied in); both keep self's layout (empty_like's Preserve) and neither reads self's values.
// And fill_ with a 0-d tensor value.

#include "common/factory_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor fill_Scalar(const Tensor& self, const Scalar& value) {
  Tensor result = opd::empty_like(self);
  factory::write_handle(result).fill_(value);
  return result;
}

Tensor fill_Tensor(const Tensor& self, const Tensor& value) {
  Tensor result = opd::empty_like(self);
  Tensor handle = factory::write_handle(result);
  opd::fill_(handle, value);
  return result;
}

// fill_ with a 0-d tensor: its one value, read with item(). PyTorch's CPU kernel does the same;
// its Meta kernel only checks, as here: a Meta self holds no values and a Meta value no number.
Tensor& fill__Tensor(Tensor& self, const Tensor& value) {
  OPD_CHECK(value.dim() == 0,
            "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.",
            value.dim());
  if (self.is_meta() && value.is_meta()) return self;
  self.fill_(value.item());
  return self;
}

Tensor copy(const Tensor& self, const Tensor& src, bool non_blocking) {
  Tensor result = opd::empty_like(self);
  factory::write_handle(result).copy_(src, non_blocking);
  return result;
}

}  // namespace opd::native
