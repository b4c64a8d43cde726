// Pinned host memory: is_pinned, pin_memory and _pin_memory.
//
// Note [Pinned memory]
// Pinned (page-locked) host memory belongs to a device's runtime (cudaHostAlloc), so only a
// device plugin can allocate it or recognise it, while the tensor lives on the CPU. PyTorch
// routes is_pinned and _pin_memory with hand-written BackendSelect kernels to the backend of
// their `device` argument, CUDA when it is None. Here a device argument of None dispatches on CPU
// (key_set_of(optional<Device>)), so the CompositeExplicitAutograd kernels below take that role:
// called without a device, they call the operator again with device=cuda, which the CUDA plugin
// answers when it is loaded and available. When it is not, the call lands here once more with a
// device named, and is_pinned answers false while _pin_memory says why it cannot pin.
// pin_memory returns self when it is pinned already, as in PyTorch. The CPU factories'
// pin_memory=True asks the device plugin for new pinned memory through _opd_empty_pinned
// (device=cuda), which fails here in the same words when no plugin answers.

#include "common/view_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// Where pinned memory comes from when the caller names no device.
constexpr Device kDefaultPinDevice{DeviceType::CUDA};

[[noreturn]] void throw_no_pinned_memory(Device device) {
  detail::throw_check<Error>(
      __FILE__, __LINE__,
      fmt::format("cannot pin memory for {}: no loaded plugin allocates pinned memory for that "
                  "device type (is its plugin loaded and available? see `opd plugins`)",
                  device_type_name(device.type)));
}

}  // namespace

bool is_pinned_default(const Tensor& self, std::optional<Device> device) {
  if (!self.is_cpu()) return false;
  if (!device) return self.is_pinned(kDefaultPinDevice);
  return false;  // no plugin of device->type answered: nothing it pinned can exist
}

Tensor _pin_memory_default(const Tensor& self, std::optional<Device> device) {
  OPD_CHECK(self.is_cpu(), "cannot pin '{}' only dense CPU tensors can be pinned",
            legacy_type_name(self.scalar_type(), self.device()));
  if (!device) return opd::_pin_memory(self, kDefaultPinDevice);
  throw_no_pinned_memory(*device);
}

Tensor _opd_empty_pinned_default(IntArrayRef, IntArrayRef, ScalarType, Device device) {
  throw_no_pinned_memory(device);
}

Tensor pin_memory(const Tensor& self, std::optional<Device> device) {
  if (self.is_pinned(device)) return self;
  return opd::_pin_memory(self, device);
}

}  // namespace opd::native
