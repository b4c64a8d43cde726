// relu and relu_: clamp_min with 0, as PyTorch's CPU kernel, written once for every backend
// (CompositeExplicitAutograd: autograd records relu's own formula, threshold_backward, rather
// than clamp_min's). Bool has no clamp_min to fall back on: PyTorch refuses it by name.

#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor relu(const Tensor& self) {
  OPD_CHECK(self.scalar_type() != kBool, "Boolean inputs not supported for relu");
  return opd::clamp_min(self, 0);
}

Tensor& relu_(Tensor& self) {
  OPD_CHECK(self.scalar_type() != kBool, "Boolean inputs not supported for relu");
  return opd::clamp_min_(self, 0);
}

}  // namespace opd::native
