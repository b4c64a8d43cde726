// The factories PyTorch writes over others: eye as zeros with its diagonal filled (a strided
// view); new_empty, new_zeros, new_ones and new_full with self's dtype and device unless given;
// type_as, a conversion to other's dtype and device (self itself when they already match); and
// the random ones over rand and randn (Note [Random factories]).

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

// Note [Random factories]
// randint, randint_like, randperm, rand_like and randn_like draw from the one Philox generator
// through rand and randn, so they run wherever rand does (CPU, Meta for shapes) and follow
// manual_seed; their values are not torch's (torch's generator is another), their
// distributions are. randint scales a uniform double in [0, 1) to [low, high) and truncates
// (53 random bits: uniform for any int64 range that fits); randperm sorts n uniform doubles
// and returns the order (argsort: ties have probability 2^-53 per pair).
Tensor randint_low(int64_t low, int64_t high, IntArrayRef size, std::optional<ScalarType> dtype,
                   std::optional<Layout> layout, std::optional<Device> device,
                   std::optional<bool> pin_memory) {
  OPD_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from={} >= to={}",
            low, high);
  const Tensor uniform = opd::rand(size, kDouble, layout, device, pin_memory);
  const Tensor offsets = opd::mul(uniform, static_cast<double>(high - low)).to(kLong);
  return opd::add(offsets, low).to(dtype.value_or(kLong));
}

Tensor randint(int64_t high, IntArrayRef size, std::optional<ScalarType> dtype,
               std::optional<Layout> layout, std::optional<Device> device,
               std::optional<bool> pin_memory) {
  return randint_low(0, high, size, dtype, layout, device, pin_memory);
}

Tensor randint_like(const Tensor& self, int64_t high, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device> device,
                    std::optional<bool> pin_memory, std::optional<MemoryFormat>) {
  return randint_low(0, high, self.sizes(), dtype.value_or(self.scalar_type()), layout,
                     device.value_or(self.device()), pin_memory);
}

Tensor randint_like_low_dtype(const Tensor& self, int64_t low, int64_t high,
                              std::optional<ScalarType> dtype, std::optional<Layout> layout,
                              std::optional<Device> device, std::optional<bool> pin_memory,
                              std::optional<MemoryFormat>) {
  return randint_low(low, high, self.sizes(), dtype.value_or(self.scalar_type()), layout,
                     device.value_or(self.device()), pin_memory);
}

Tensor randperm(int64_t n, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device> device, std::optional<bool> pin_memory) {
  const ScalarType t = dtype.value_or(kLong);
  OPD_CHECK(t != kBool, "\"randperm\" not implemented for 'Bool'");
  return opd::argsort(opd::rand({n}, kDouble, layout, device, pin_memory)).to(t);
}

Tensor rand_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                 std::optional<Device> device, std::optional<bool> pin_memory,
                 std::optional<MemoryFormat>) {
  return opd::rand(self.sizes(), dtype.value_or(self.scalar_type()), layout,
                   device.value_or(self.device()), pin_memory);
}

Tensor randn_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory,
                  std::optional<MemoryFormat>) {
  return opd::randn(self.sizes(), dtype.value_or(self.scalar_type()), layout,
                    device.value_or(self.device()), pin_memory);
}

Tensor type_as(const Tensor& self, const Tensor& other) {
  return self.to(other.device(), other.scalar_type());
}

}  // namespace opd::native
