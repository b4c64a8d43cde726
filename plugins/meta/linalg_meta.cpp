// Meta kernels of the matrix products: the CPU kernels' checks, shapes and dtypes
// (common/linalg_shape.h), and no data.

#include "common/linalg_shape.h"
#include "common/output.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor mm(const Tensor& self, const Tensor& mat2) {
  return common::empty_output(common::mm_sizes(self, mat2), self.scalar_type(), self.device());
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  return common::empty_output(common::bmm_sizes(self, mat2), self.scalar_type(), self.device());
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar&,
             const Scalar&) {
  return common::empty_output(common::addmm_sizes(self, mat1, mat2), mat1.scalar_type(),
                              mat1.device());
}

}  // namespace opd::native
