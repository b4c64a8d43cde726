// Comparisons on the CPU: eq, ne, lt, le, gt, ge. Inputs are promoted to a common dtype; the
// result is Bool.

#include <functional>
#include <utility>

#include "common/elementwise.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

// Cmp is a std:: comparison function object (std::equal_to<> ...).
template <class Cmp>
Tensor compare(std::string_view op, const char* kernel_name, const Tensor& self,
               const Tensor& other) {
  common::TensorIterator iter = common::comparison_meta(op, Tensor(), self, other);
  OPD_DISPATCH_ALL_TYPES_AND_BOOL(iter.common_dtype(), kernel_name, [&] {
    cpu::cpu_kernel(iter, [](scalar_t a, scalar_t b) -> bool { return Cmp{}(a, b); });
  });
  return std::move(iter).output();
}

}  // namespace

Tensor eq_Tensor(const Tensor& self, const Tensor& other) {
  return compare<std::equal_to<>>("eq", "eq_cpu", self, other);
}
Tensor ne_Tensor(const Tensor& self, const Tensor& other) {
  return compare<std::not_equal_to<>>("ne", "ne_cpu", self, other);
}
Tensor lt_Tensor(const Tensor& self, const Tensor& other) {
  return compare<std::less<>>("lt", "lt_cpu", self, other);
}
Tensor le_Tensor(const Tensor& self, const Tensor& other) {
  return compare<std::less_equal<>>("le", "le_cpu", self, other);
}
Tensor gt_Tensor(const Tensor& self, const Tensor& other) {
  return compare<std::greater<>>("gt", "gt_cpu", self, other);
}
Tensor ge_Tensor(const Tensor& self, const Tensor& other) {
  return compare<std::greater_equal<>>("ge", "ge_cpu", self, other);
}

}  // namespace opd::native
