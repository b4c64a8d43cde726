// Meta kernel of masked_scatter_: the CPU kernel's checks (common/masked_scatter_check.h) and no
// data. Whether source has enough elements depends on the mask's values: not checked here.

#include "common/masked_scatter_check.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  common::masked_scatter_mask(self, mask, source);
  return self;
}

}  // namespace opd::native
