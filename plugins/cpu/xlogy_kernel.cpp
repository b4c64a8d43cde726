// CPU impl of the structured xlogy (xlogy.OutTensor; xlogy.Tensor and xlogy_.Tensor delegate to
// it): x * log(y), 0 where x is 0, NaN where y is NaN (even where x is 0), as PyTorch's. Half and
// BFloat16 compute in float and round once.

#include <cmath>

#include "common/elementwise.h"
#include "common/loops.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {

void xlogy_out(const common::TensorIterator& iter, const Tensor&, const Tensor&) {
  OPD_DISPATCH_FLOATING_TYPES_AND2(kHalf, kBFloat16, iter.common_dtype(), "xlogy_cpu", [&] {
    using opmath = common::opmath_t<scalar_t>;
    cpu::cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {
      const opmath x = a, y = b;
      if (std::isnan(y)) return static_cast<scalar_t>(y);
      if (x == opmath(0)) return static_cast<scalar_t>(0);
      return static_cast<scalar_t>(x * std::log(y));
    });
  });
}

}  // namespace opd::native
