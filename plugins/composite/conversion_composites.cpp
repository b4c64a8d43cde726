// Copies and conversions: _to_copy, to (dtype / device), clone, contiguous, zero_ and item.
// `to` and `contiguous` return self itself when nothing would change, as in PyTorch, so the
// result aliases self.

#include "common/factory_shape.h"
#include "common/view_shape.h"
#include "opd/device_guard.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// A device without index means the current one of its type (PyTorch's ensure_has_index, from
// the backend's device guard); a type without a guard has one device, index 0.
Device with_index(Device d) {
  d = ensure_has_index(d);
  return d.has_index() ? d : Device(d.type, 0);
}

// PyTorch's to_will_alias: the requested conversion changes nothing about self.
bool to_will_alias(const Tensor& self, std::optional<ScalarType> dtype,
                   std::optional<Device> device, bool copy,
                   std::optional<MemoryFormat> memory_format) {
  const MemoryFormat format = memory_format.value_or(MemoryFormat::Preserve);
  return !copy && (!dtype || *dtype == self.scalar_type()) &&
         (!device || with_index(*device) == with_index(self.device())) &&
         (format == MemoryFormat::Preserve ||
          suggest_memory_format(self.sizes(), self.strides()) == format);
}

}  // namespace

Tensor _to_copy(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                std::optional<MemoryFormat> memory_format) {
  // A non-blocking copy from a device to the host lands in pinned memory, so that it can be left
  // queued (PyTorch's pin_out; Note [CUDA copies]).
  const bool pin_out = non_blocking && self.is_cuda() && device && device->is_cpu() &&
                       layout.value_or(Layout::Strided) == Layout::Strided;
  if (pin_out && !pin_memory) pin_memory = true;
  Tensor result = opd::empty_like(self, dtype, layout, device, pin_memory, memory_format);
  factory::write_handle(result).copy_(self, non_blocking);  // Note [Factory versions]
  return result;
}

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool non_blocking, bool copy,
                std::optional<MemoryFormat> memory_format) {
  if (to_will_alias(self, dtype, std::nullopt, copy, memory_format)) return self;
  return opd::_to_copy(self, dtype, std::nullopt, std::nullopt, std::nullopt, non_blocking,
                       memory_format);
}

Tensor to_device(const Tensor& self, Device device, ScalarType dtype, bool non_blocking, bool copy,
                 std::optional<MemoryFormat> memory_format) {
  if (to_will_alias(self, dtype, device, copy, memory_format)) return self;
  return opd::_to_copy(self, dtype, std::nullopt, device, std::nullopt, non_blocking,
                       memory_format);
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  Tensor result =
      opd::empty_like(self, std::nullopt, std::nullopt, std::nullopt, std::nullopt, memory_format);
  factory::write_handle(result).copy_(self);  // Note [Factory versions]
  return result;
}

Tensor contiguous(const Tensor& self, MemoryFormat memory_format) {
  if (is_contiguous_in(self.sizes(), self.strides(), memory_format)) return self;
  OPD_CHECK(memory_format != MemoryFormat::Preserve,
            "preserve memory format is unsupported by the contiguous operator");
  return opd::clone(self, memory_format);
}

Tensor& zero_(Tensor& self) {
  self.fill_(0);
  return self;
}

Scalar item(const Tensor& self) {
  OPD_CHECK(self.numel() == 1, "a Tensor with {} elements cannot be converted to Scalar",
            self.numel());
  return opd::_local_scalar_dense(self);
}

}  // namespace opd::native
