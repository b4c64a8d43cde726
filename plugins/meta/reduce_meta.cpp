// Meta kernels of the reductions that are not structured (opd-gen writes the others from their
// meta functions): the CPU kernels' checks, shapes and dtypes (common/reduction.h), and no data.

#include <tuple>

#include "common/output.h"
#include "common/reduction.h"
#include "opd/native/Meta.h"
#include "opd/native/meta_functions.h"

namespace opd::native {

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return meta::sum_IntList(Tensor(), self, std::nullopt, false, dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  return meta::mean(Tensor(), self, std::nullopt, false, dtype);
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  const common::ReductionMeta m = common::max_dim_meta(self, dim, keepdim);
  return {common::empty_output(m.sizes, m.dtype, self.device()),
          common::empty_output(m.sizes, kLong, self.device())};
}

}  // namespace opd::native
