// kthvalue, CompositeExplicitAutograd as PyTorch's: new values and indices, filled by
// kthvalue.values (its derivative is kthvalue's own entry in derivatives.yaml).

#include <tuple>

#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  Tensor values = opd::empty({0}, TensorOptions(self.scalar_type()).device(self.device()));
  Tensor indices = opd::empty({0}, TensorOptions(kLong).device(self.device()));
  opd::kthvalue_outf(self, k, dim, keepdim, values, indices);
  return {values, indices};
}

}  // namespace opd::native
