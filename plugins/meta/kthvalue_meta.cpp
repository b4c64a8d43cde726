// Meta kernel of kthvalue.values: the CPU kernel's checks and output resizing
// (common/kthvalue_shape.h), and no data.

#include <tuple>

#include "common/kthvalue_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

std::tuple<Tensor&, Tensor&> kthvalue_values(const Tensor& self, int64_t k, int64_t dim,
                                             bool keepdim, Tensor& values, Tensor& indices) {
  dim = common::kthvalue_prepare(self, k, dim, values, indices, keepdim);
  common::kthvalue_finish(self, dim, values, indices, keepdim);
  return {values, indices};
}

}  // namespace opd::native
