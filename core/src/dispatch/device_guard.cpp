#include "opd/device_guard.h"

#include <array>
#include <string>
#include <utility>

#include "opd/error.h"
#include "opd/thread_annotations.h"

namespace opd {

// Note [Device guards]
// A backend with several devices has a current one per thread; a device named without an index
// ("cuda", "acme") means it. PyTorch keeps a DeviceGuardImplInterface per device type, which
// to() asks (ensure_has_index) and DeviceGuard sets and restores around a call. Here a backend's
// plugin registers its guard with Library::device_guard, beside its kernels, and the
// registration goes with the plugin's others when it unloads. The registry holds the guard as a
// shared_ptr made by make_device_guard, whose control block pins the plugin's library (opd/
// plugin_object.h): a DeviceGuard still in scope on another thread keeps the code it calls mapped
// after the plugin's registrations are undone, and a lookup after that finds no guard. Lookups
// take the registry's mutex only to copy the pointer; the guard's calls run outside it. CPU and
// Meta register none (one device each); a backend without a guard resolves "dev" to "dev" with
// no index, which its factories read as device 0, as before guards existed.

namespace {

struct Registry {
  Mutex mutex;
  std::array<std::shared_ptr<const DeviceGuardImpl>, kNumDeviceTypes> guards OPD_GUARDED_BY(mutex);
  std::array<std::string, kNumDeviceTypes> sites OPD_GUARDED_BY(mutex);
};

// Never destroyed: a plugin unloaded at exit, after static destructors, still undoes its
// registration here.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

size_t slot(DeviceType type) { return static_cast<size_t>(type); }

}  // namespace

RegistrationHandle register_device_guard(DeviceType type,
                                         std::shared_ptr<const DeviceGuardImpl> impl,
                                         std::string debug) {
  OPD_CHECK(impl != nullptr, "register_device_guard: a null guard for {} ({})",
            device_type_name(type), debug);
  Registry& r = registry();
  MutexLock lock(r.mutex);
  OPD_CHECK(!r.guards[slot(type)],
            "register_device_guard: {} already has a device guard ({}); the second is {}",
            device_type_name(type), r.sites[slot(type)], debug);
  const DeviceGuardImpl* registered = impl.get();
  r.guards[slot(type)] = std::move(impl);
  r.sites[slot(type)] = std::move(debug);
  return RegistrationHandle([type, registered] {
    std::shared_ptr<const DeviceGuardImpl> dropped;  // released after the lock
    Registry& r = registry();
    MutexLock lock(r.mutex);
    if (r.guards[slot(type)].get() != registered) return;
    dropped = std::move(r.guards[slot(type)]);
    r.sites[slot(type)].clear();
  });
}

std::shared_ptr<const DeviceGuardImpl> device_guard_impl(DeviceType type) {
  Registry& r = registry();
  MutexLock lock(r.mutex);
  return r.guards[slot(type)];
}

Device ensure_has_index(Device device) {
  if (device.has_index()) return device;
  const std::shared_ptr<const DeviceGuardImpl> impl = device_guard_impl(device.type);
  if (!impl) return device;
  return Device(device.type, impl->current_device());
}

}  // namespace opd
