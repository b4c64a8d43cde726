// masked_scatter, CompositeExplicitAutograd as PyTorch's: self broadcast with the mask, copied
// contiguous, then masked_scatter_ in place (its derivative is masked_scatter's own entry in
// derivatives.yaml).

#include <vector>

#include "common/broadcast.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const std::vector<int64_t> sizes = common::infer_size(self.sizes(), mask.sizes());
  Tensor result = opd::clone(self.expand(sizes), MemoryFormat::Contiguous);
  result.masked_scatter_(mask, source);
  return result;
}

}  // namespace opd::native
