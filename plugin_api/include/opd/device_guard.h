#pragma once

// Device guards: a backend's "current device" of the calling thread, as PyTorch's
// c10::impl::DeviceGuardImplInterface (what a backend implements) and c10::DeviceGuard (what a
// caller scopes). A device without an index ("acme", index -1) means the current one of its
// type; ensure_has_index() resolves it, as PyTorch's to() does. A backend registers its guard
// from a plugin, beside its kernels:
//
//   struct AcmeGuard final : opd::DeviceGuardImpl { ... };
//   OPD_LIBRARY_IMPL(_, PrivateUse1, m) { m.device_guard(opd::make_device_guard<AcmeGuard>()); }
//
// See Note [Device guards] in core/src/dispatch/device_guard.cpp.

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "opd/device.h"
#include "opd/export.h"
#include "opd/plugin.h"
#include "opd/plugin_object.h"
#include "opd/registration_handle.h"
#include "opd/warning.h"

namespace opd {

// What a backend implements. Every member may be called from any thread, concurrently.
class DeviceGuardImpl {
 public:
  virtual ~DeviceGuardImpl() = default;
  // The calling thread's current device index of the backend.
  virtual int8_t current_device() const = 0;
  // Makes `index` the calling thread's current device. Throws (IndexError, say) for an index
  // the backend does not have; the current device is then unchanged.
  virtual void set_device(int8_t index) const = 0;
  // The same for an index that was current before (DeviceGuard's restore, in a destructor):
  // must not throw. By default set_device, with what it throws reported as a warning.
  virtual void unchecked_set_device(int8_t index) const noexcept {
    try {
      set_device(index);
    } catch (const std::exception& e) {
      warn(std::string("DeviceGuard could not restore the current device: ") + e.what());
    }
  }
  // How many devices the backend has: indices 0 .. device_count() - 1.
  virtual int8_t device_count() const noexcept = 0;
};

// Inside a plugin: an Impl for Library::device_guard that keeps the plugin's library mapped
// while anyone holds it (a DeviceGuard in flight while the plugin unloads).
template <class Impl, class... Args>
std::shared_ptr<const DeviceGuardImpl> make_device_guard(Args&&... args) {
  return allocate_plugin_shared<Impl>(nullptr, this_plugin_reference(),
                                      std::forward<Args>(args)...);
}

// The guard of `type` until the handle goes. Library::device_guard calls this and keeps the
// handle with the library's other registrations. Throws Error when `type` has one already
// (naming where it was registered) and for a null `impl`.
OPD_API RegistrationHandle register_device_guard(DeviceType type,
                                                 std::shared_ptr<const DeviceGuardImpl> impl,
                                                 std::string debug);
// The guard registered for `type`, or null: the CPU and Meta have none (one device each), nor a
// backend whose plugin registered none.
OPD_API std::shared_ptr<const DeviceGuardImpl> device_guard_impl(DeviceType type);
// `device` itself when it has an index or its type has no guard; otherwise the calling thread's
// current device of that type (PyTorch's ensure_has_index).
OPD_API Device ensure_has_index(Device device);

// Makes `device` its type's current device for the scope and restores the previous one after.
// Does nothing for a device without an index or of a type without a guard.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device) {
    if (!device.has_index()) return;
    impl_ = device_guard_impl(device.type);
    if (!impl_) return;
    previous_ = impl_->current_device();
    if (previous_ != device.index) impl_->set_device(device.index);
  }
  ~DeviceGuard() {
    if (impl_) impl_->unchecked_set_device(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  std::shared_ptr<const DeviceGuardImpl> impl_;
  int8_t previous_ = -1;
};

}  // namespace opd
