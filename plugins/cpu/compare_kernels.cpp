// Comparisons on the CPU: eq, ne, lt, le, gt, ge. Inputs are promoted to a common dtype; the
// result is Bool (cast into an out= or in-place tensor of another dtype).

#include <functional>
#include <utility>

#include "common/elementwise.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

// Cmp is a std:: comparison function object (std::equal_to<> ...). Half and BFloat16 compare as
// float; complex numbers only for equality (kEquality), having no order. The metadata step
// (common::comparison_meta, in the meta functions) has checked the dtype.
template <class Cmp, bool kEquality = false>
void compare(const common::TensorIterator& iter, const char* kernel_name) {
  const auto run = [&](auto element) {
    using scalar_t = decltype(element);
    using opmath = common::opmath_t<scalar_t>;
    cpu::cpu_kernel(iter,
                    [](scalar_t a, scalar_t b) -> bool { return Cmp{}(opmath(a), opmath(b)); });
  };
  if constexpr (kEquality) {
    OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(),
                                            kernel_name, [&] { run(scalar_t{}); });
  } else {
    OPD_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(), kernel_name,
                                [&] { run(scalar_t{}); });
  }
}

}  // namespace

// The structured impls (Note [Structured kernels] in tools/gen/structured.h).
void eq_Tensor_out(const common::TensorIterator& iter, const Tensor&, const Tensor&) {
  compare<std::equal_to<>, true>(iter, "eq_cpu");
}
void ne_Tensor_out(const common::TensorIterator& iter, const Tensor&, const Tensor&) {
  compare<std::not_equal_to<>, true>(iter, "ne_cpu");
}
void lt_Tensor_out(const common::TensorIterator& iter, const Tensor&, const Tensor&) {
  compare<std::less<>>(iter, "lt_cpu");
}
void le_Tensor_out(const common::TensorIterator& iter, const Tensor&, const Tensor&) {
  compare<std::less_equal<>>(iter, "le_cpu");
}
void gt_Tensor_out(const common::TensorIterator& iter, const Tensor&, const Tensor&) {
  compare<std::greater<>>(iter, "gt_cpu");
}
void ge_Tensor_out(const common::TensorIterator& iter, const Tensor&, const Tensor&) {
  compare<std::greater_equal<>>(iter, "ge_cpu");
}

}  // namespace opd::native
