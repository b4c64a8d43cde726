// The factories PyTorch writes over others: eye as zeros with its diagonal filled (a strided
// view); new_empty, new_zeros, new_ones and new_full with self's dtype and device unless given;
// and type_as, a conversion to other's dtype and device (self itself when they already match).

#include <algorithm>

#include "common/factory_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor eye_m(int64_t n, int64_t m, std::optional<ScalarType> dtype, std::optional<Layout> layout,
             std::optional<Device> device, std::optional<bool> pin_memory) {
  OPD_CHECK(n >= 0, "n must be greater or equal to 0, got {}", n);
  OPD_CHECK(m >= 0, "m must be greater or equal to 0, got {}", m);
  // PyTorch 1.13's CPU kernel has every type but BFloat16.
  OPD_CHECK(dtype != kBFloat16, "\"eye\" not implemented for 'BFloat16'");
  Tensor result = opd::zeros({n, m}, dtype, layout, device, pin_memory);
  const Tensor handle = factory::write_handle(result);  // Note [Factory versions]
  handle.as_strided({std::min(n, m)}, {m + 1}).fill_(1);
  return result;
}

Tensor eye(int64_t n, std::optional<ScalarType> dtype, std::optional<Layout> layout,
           std::optional<Device> device, std::optional<bool> pin_memory) {
  return eye_m(n, n, dtype, layout, device, pin_memory);
}

Tensor new_empty(const Tensor& self, IntArrayRef size, std::optional<ScalarType> dtype,
                 std::optional<Layout> layout, std::optional<Device> device,
                 std::optional<bool> pin_memory) {
  return opd::empty(size, dtype.value_or(self.scalar_type()), layout,
                    device.value_or(self.device()), pin_memory, std::nullopt);
}

Tensor new_zeros(const Tensor& self, IntArrayRef size, std::optional<ScalarType> dtype,
                 std::optional<Layout> layout, std::optional<Device> device,
                 std::optional<bool> pin_memory) {
  return opd::zeros(size, dtype.value_or(self.scalar_type()), layout,
                    device.value_or(self.device()), pin_memory);
}

Tensor new_ones(const Tensor& self, IntArrayRef size, std::optional<ScalarType> dtype,
                std::optional<Layout> layout, std::optional<Device> device,
                std::optional<bool> pin_memory) {
  return opd::ones(size, dtype.value_or(self.scalar_type()), layout, device.value_or(self.device()),
                   pin_memory);
}

Tensor new_full(const Tensor& self, IntArrayRef size, const Scalar& fill_value,
                std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device> device, std::optional<bool> pin_memory) {
  return opd::full(size, fill_value, dtype.value_or(self.scalar_type()), layout,
                   device.value_or(self.device()), pin_memory);
}

Tensor type_as(const Tensor& self, const Tensor& other) {
  return self.to(other.device(), other.scalar_type());
}

}  // namespace opd::native
