#include "opd/device_guard.h"

#include <array>
#include <list>
#include <string>
#include <utility>

#include "opd/error.h"
#include "opd/thread_annotations.h"
#include "registration_context.h"

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
// A reload registers the new version before it undoes the old one (PluginManager::reload), so
// the version being replaced may hold the guard while the new one registers its own: the new
// guard then goes in front of the old one (it serves lookups from then on), as a replaced
// kernel does, and undoing the old registration removes only the old guard. Any other second
// guard for a device type is refused, naming the first.

namespace {

struct Registered {
  std::shared_ptr<const DeviceGuardImpl> impl;
  std::string site;
  const void* owner;  // the registering plugin's library owner; null outside a plugin load
};

struct Registry {
  Mutex mutex;
  // Per device type, the serving guard first; a second one only while a reload replaces the first.
  std::array<std::list<Registered>, kNumDeviceTypes> guards OPD_GUARDED_BY(mutex);
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
  const opd_plugin_context* ctx = detail::current_registration_context();
  const void* owner = ctx ? ctx->owner.get() : nullptr;
  Registry& r = registry();
  MutexLock lock(r.mutex);
  std::list<Registered>& list = r.guards[slot(type)];
  const bool replacing =
      ctx && ctx->replaces && !list.empty() && list.front().owner == ctx->replaces;
  OPD_CHECK(list.empty() || replacing,
            "register_device_guard: {} already has a device guard ({}); the second is {}",
            device_type_name(type), list.front().site, debug);
  auto entry = list.insert(list.begin(), Registered{std::move(impl), std::move(debug), owner});
  return RegistrationHandle([type, entry] {
    std::shared_ptr<const DeviceGuardImpl> dropped;  // released after the lock
    Registry& r = registry();
    MutexLock lock(r.mutex);
    dropped = std::move(entry->impl);
    r.guards[slot(type)].erase(entry);
  });
}

std::shared_ptr<const DeviceGuardImpl> device_guard_impl(DeviceType type) {
  Registry& r = registry();
  MutexLock lock(r.mutex);
  const std::list<Registered>& list = r.guards[slot(type)];
  return list.empty() ? nullptr : list.front().impl;
}

Device ensure_has_index(Device device) {
  if (device.has_index()) return device;
  const std::shared_ptr<const DeviceGuardImpl> impl = device_guard_impl(device.type);
  if (!impl) return device;
  return Device(device.type, impl->current_device());
}

}  // namespace opd
