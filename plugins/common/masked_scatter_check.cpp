#include "common/masked_scatter_check.h"

#include "common/output.h"
#include "opd/error.h"
#include "opd/warning.h"

namespace opd::common {

Tensor masked_scatter_mask(const Tensor& self, const Tensor& mask, const Tensor& source) {
  check_no_internal_overlap(self);
  OPD_CHECK(self.scalar_type() == source.scalar_type(),
            "masked_scatter: expected self and source to have same dtypes but got{} and {}",
            self.scalar_type(), source.scalar_type());
  const ScalarType m = mask.scalar_type();
  OPD_CHECK(m == kBool || m == ScalarType::UInt8,
            "masked_scatter_ only supports boolean masks, but got mask with dtype {}", m);
  Tensor expanded = mask.expand(self.sizes());
  if (m == ScalarType::UInt8) {
    warn(
        "masked_scatter_ received a mask with dtype torch.uint8, this behavior is now "
        "deprecated,please use a mask with dtype torch.bool instead.");
  }
  return expanded;
}

}  // namespace opd::common
