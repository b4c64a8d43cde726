// Factories built from empty / empty_strided / empty_like and fill_: zeros, ones, full,
// scalar_tensor and the *_like family. Unset options take PyTorch's defaults (dtype Float, device
// CPU) in empty; the *_like ones take self's dtype and device. Each fills through a write handle,
// so that its result starts at version 0 (Note [Factory versions] in common/factory_shape.h).

#include "common/factory_shape.h"
#include "common/tensor_iterator.h"
#include "common/view_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// full's dtype when none is given: that of the fill value's kind (PyTorch's infer_full_options).
ScalarType full_dtype(const Scalar& value) {
  if (value.is_boolean()) return kBool;
  if (value.is_integral(/*include_bool=*/false)) return kLong;
  if (value.is_complex()) return kComplexFloat;
  return kFloat;
}

}  // namespace

Tensor zeros(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
             std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor result = opd::empty(size, dtype, layout, device, pin_memory, std::nullopt);
  factory::write_handle(result).zero_();
  return result;
}

Tensor ones(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
            std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor result = opd::empty(size, dtype, layout, device, pin_memory, std::nullopt);
  factory::write_handle(result).fill_(1);
  return result;
}

Tensor full(IntArrayRef size, const Scalar& fill_value, std::optional<ScalarType> dtype,
            std::optional<Layout> layout, std::optional<Device> device,
            std::optional<bool> pin_memory) {
  Tensor result = opd::empty(size, dtype.value_or(full_dtype(fill_value)), layout, device,
                             pin_memory, std::nullopt);
  factory::write_handle(result).fill_(fill_value);
  return result;
}

Tensor scalar_tensor(const Scalar& s, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                     std::optional<Device> device, std::optional<bool> pin_memory) {
  Tensor result = opd::empty(IntArrayRef{}, dtype, layout, device, pin_memory, std::nullopt);
  factory::write_handle(result).fill_(s);
  return result;
}

// memory_format Preserve (the default) keeps self's strides when they are dense and
// non-overlapping, and otherwise makes a dense tensor with the order of self's dimensions
// (common::infer_dense_strides, Note [Output layout]): PyTorch's rule. A contiguous self (the
// cached flag, no sort of its strides) counts as dense and non-overlapping, as in PyTorch's
// TensorImpl, where that includes an empty tensor whatever its strides.
Tensor empty_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory,
                  std::optional<MemoryFormat> memory_format) {
  const ScalarType out_dtype = dtype.value_or(self.scalar_type());
  const Device out_device = device.value_or(self.device());
  MemoryFormat format = memory_format.value_or(MemoryFormat::Preserve);
  if (format == MemoryFormat::Preserve) {
    if (self.is_contiguous() || is_non_overlapping_and_dense(self.sizes(), self.strides())) {
      return opd::empty_strided(self.sizes(), self.strides(), out_dtype, layout, out_device,
                                pin_memory);
    }
    const common::DimVector strides = common::infer_dense_strides(self.sizes(), self.strides());
    return opd::empty_strided(self.sizes(), IntArrayRef(strides.data(), strides.size()), out_dtype,
                              layout, out_device, pin_memory);
  }
  return opd::empty(self.sizes(), out_dtype, layout, out_device, pin_memory, format);
}

Tensor zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory,
                  std::optional<MemoryFormat> memory_format) {
  Tensor result = opd::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  factory::write_handle(result).zero_();
  return result;
}

Tensor ones_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                 std::optional<Device> device, std::optional<bool> pin_memory,
                 std::optional<MemoryFormat> memory_format) {
  Tensor result = opd::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  factory::write_handle(result).fill_(1);
  return result;
}

Tensor full_like(const Tensor& self, const Scalar& fill_value, std::optional<ScalarType> dtype,
                 std::optional<Layout> layout, std::optional<Device> device,
                 std::optional<bool> pin_memory, std::optional<MemoryFormat> memory_format) {
  Tensor result = opd::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  factory::write_handle(result).fill_(fill_value);
  return result;
}

}  // namespace opd::native
