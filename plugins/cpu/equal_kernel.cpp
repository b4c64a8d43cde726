// equal: whether two tensors have the same size and the same values, as PyTorch's cpu_equal:
// the operands are compared in their common dtype (equal(float, double) compares values), NaN
// equals nothing, and a tensor compared with itself is equal unless it holds a NaN.

#include "common/type_dispatch.h"
#include "common/type_promotion.h"
#include "cpu/convert.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

template <class T>
bool same_value(T a, T b) {
  if constexpr (cpu::kIsHalfLike<T>) {
    return static_cast<float>(a) == static_cast<float>(b);
  } else {
    return a == b;
  }
}

}  // namespace

bool equal(const Tensor& self, const Tensor& other) {
  OPD_CHECK(self.device() == other.device(),
            "Cannot compare two tensors on different devices. Got: {} and {}", self.device().str(),
            other.device().str());
  if (!self.sizes().equals(other.sizes())) return false;
  const ScalarType common = common::result_type(self, other);
  const Tensor a = self.to(common).contiguous();
  const Tensor b = other.to(common).contiguous();
  const int64_t n = a.numel();
  bool result = true;
  OPD_DISPATCH_EVERY_TYPE(common, "equal_cpu", [&] {
    const auto* x = static_cast<const scalar_t*>(a.data_ptr());
    const auto* y = static_cast<const scalar_t*>(b.data_ptr());
    for (int64_t i = 0; i < n && result; ++i) result = same_value(x[i], y[i]);
  });
  return result;
}

}  // namespace opd::native
