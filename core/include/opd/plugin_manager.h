#pragma once

#include <memory>
#include <string>
#include <vector>

#include "opd/dispatch_key.h"
#include "opd/export.h"

namespace opd {

// A plugin's life cycle (DESIGN.md, "Plugins"):
//   available    a manifest was found; the library has not been opened
//   loading      its library is open and its registration is running (a load of it from its own
//                registration is refused)
//   loaded       registered and serving
//   unavailable  the plugin said it cannot run here (reason says why); nothing registered
//   failed       loading was refused or registration failed (reason says why); nothing remains
//   unloading    deregistered; the library stays mapped until the last object it made is gone
//   unloaded     deregistered and unmapped
//   resident     deregistered, but the library could not be unmapped (reason says why: the
//                loader kept it, or threads its shutdown did not stop were left running)
enum class PluginState {
  Available,
  Loaded,
  Unavailable,
  Failed,
  Unloading,
  Unloaded,
  Resident,
  Loading,
};
OPD_API const char* to_string(PluginState s);

struct PluginStatus {
  std::string name;
  std::string version;
  PluginState state = PluginState::Available;
  std::string reason;
  std::vector<DispatchKey> dispatch_keys;  // declared by the manifest
  // The keys its kernels and fallbacks are registered on (alias keys as registered), in key
  // order; empty unless loaded. Always allowed by dispatch_keys (Note [Declared dispatch keys]).
  std::vector<DispatchKey> served_keys;
  std::vector<std::string> requires_;
  bool load_default = false;
  std::string description;
  std::string manifest;      // absolute path
  std::string library;       // absolute path
  size_t registrations = 0;  // defs, kernels and fallbacks it has registered (when loaded)
};

// The process-wide plugin manager. Thread-safe: one mutex serialises loads, unloads and reloads,
// and is held while plugin code runs (register and shutdown callbacks); list() and status() never
// wait for it, so a plugin's registration may wait on a thread that asks for them (it sees the
// plugin `loading`). Dispatch never takes either.
class OPD_API PluginManager {
 public:
  // Every plugin found in the search path (manifests only: no library is opened), merged with
  // the state of those loaded or tried. Sorted by name.
  std::vector<PluginStatus> list();
  // Loads a plugin by name (searched in the search path) or by manifest path, after the
  // plugins it requires. Throws PluginError naming the file and what is wrong when it is
  // refused or its registration fails; the plugin is then `failed` and nothing of it remains.
  // A plugin that reports itself unavailable is not an error: the returned status says so.
  // Loading a plugin from its own registration throws PluginError: "plugin 'x' is already being
  // loaded (re-entrant load from its own registration)". A kernel or fallback on a key the
  // manifest's dispatch_keys do not allow fails the load (Note [Declared dispatch keys] in
  // core/src/dispatch/registration_context.cpp).
  PluginStatus load(const std::string& name_or_manifest);
  // Loads every plugin whose manifest says `load: default`, in dependency order. Never throws
  // for one plugin's failure: each status says what happened.
  std::vector<PluginStatus> load_default();
  // Deregisters a loaded plugin at once, then unmaps it when nothing it made is alive and no
  // dispatcher call that started before can still be inside it (`unloading` until then, then
  // `unloaded`; `resident` if threads it started are left running). Never waits for calls in
  // flight. Throws
  // PluginError when another loaded plugin requires it (naming it), unless `cascade`, which
  // unloads the dependants first.
  PluginStatus unload(const std::string& name, bool cascade = false);
  // Replaces a loaded plugin with the library now at its path (rebuilt): registers the new
  // version before deregistering the old one, so that no call sees a missing kernel.
  PluginStatus reload(const std::string& name);
  // Throws PluginError when no plugin of that name is known.
  PluginStatus status(const std::string& name);
  // The folders searched for manifests, in order: the build tree's plugins/ (next to lib/; only
  // when libopd_core.so is in a build tree, whose CMakeCache.txt is next to lib/, never for an
  // install prefix), the install prefix's lib/opdispatch/plugins/ (both found from
  // libopd_core.so's location), then OPD_PLUGIN_PATH (colon-separated).
  std::vector<std::string> search_path();

  struct Impl;

 private:
  friend OPD_API PluginManager& plugins();
  PluginManager();
  std::unique_ptr<Impl> impl_;
};

OPD_API PluginManager& plugins();

}  // namespace opd
