// xlogy's meta function (structured, opd/native/meta_functions.h): PyTorch's binary_float_op
// (integers and bools promote to the default float type) over the CPU kernel's dtypes, the
// floating types with Half and BFloat16 ("xlogy_cpu" not implemented for 'ComplexFloat').

#include "common/elementwise.h"
#include "opd/native/meta_functions.h"

namespace opd {

common::TensorIterator meta::xlogy_OutTensor(const Tensor& out, const Tensor& self,
                                             const Tensor& other) {
  common::TensorIterator iter = common::TensorIterator::binary_float_op("xlogy", out, self, other);
  common::check_kernel_dtype("xlogy", iter.device(), iter.common_dtype(),
                             common::TypeSet::Floating.with(kHalf, kBFloat16));
  return iter;
}

}  // namespace opd
