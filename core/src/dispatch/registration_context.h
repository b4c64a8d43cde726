#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "opd/plugin.h"

// What the dispatcher knows about the plugin whose registrations are running on this thread.
// The plugin manager installs it around a plugin's register and shutdown callbacks.
struct opd_plugin_context {
  // Appended to every registration's debug string: " (plugin cpu 0.1.0)".
  std::string suffix;
  // Keeps the plugin's library mapped; stored with each registration so that a replaced kernel
  // keeps its code alive until no call can be running it (Note [Kernel reclamation]).
  std::shared_ptr<void> owner;
  // During reload: the owner of the version being replaced, whose defs and DEF libraries the new
  // version may duplicate until the old one is unloaded.
  const void* replaces = nullptr;
  // Set by the plugin through opd_plugin_set_message.
  std::string message;
  // The plugin's name and its manifest's dispatch_keys: kernels and fallbacks on other keys are
  // refused (Note [Declared dispatch keys] in registration_context.cpp).
  std::string plugin;
  std::vector<opd::DispatchKey> declared_keys;
  // The manifest declares PrivateUse: the plugin may claim any free vendor slot, which then
  // counts as declared (Note [Vendor slots] in opd/privateuse.h).
  bool any_privateuse_slot = false;
  // Bit k: a kernel or fallback was registered on DispatchKey k (as given, alias keys included).
  uint64_t served_keys = 0;
};

namespace opd::detail {

// The context of the registration running on this thread, or null (executables, tests).
opd_plugin_context* current_registration_context();

// Inside a plugin's registration: throws PluginError when `key` is not one the plugin's manifest
// declares (Note [Declared dispatch keys]), else records it as served. `what` names the
// registration ("a kernel for aten::add.Tensor", "a backend fallback"). Outside one: nothing.
void check_declared_key(opd::DispatchKey key, const std::string& what);

// Whether declaring `declared` lets a plugin register on `key`. Exported for the tests.
OPD_API bool declared_keys_allow(const std::vector<opd::DispatchKey>& declared,
                                 opd::DispatchKey key);

// Installs `ctx` for the scope.
class ScopedRegistrationContext {
 public:
  explicit ScopedRegistrationContext(opd_plugin_context* ctx);
  ~ScopedRegistrationContext();
  ScopedRegistrationContext(const ScopedRegistrationContext&) = delete;
  ScopedRegistrationContext& operator=(const ScopedRegistrationContext&) = delete;

 private:
  opd_plugin_context* previous_;
};

}  // namespace opd::detail
