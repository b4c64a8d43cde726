#pragma once

// The vendor slots PrivateUse1..3, claimed by name: several out-of-tree devices in one process
// (issue 33 §4b). See Note [Vendor slots].
//
//   OPD_PLUGIN(acme_device, "0.1.0") { acme_slot = opd::register_privateuse_backend("acme"); }
//   OPD_LIBRARY_IMPL_PRIVATEUSE(aten, m) { m.impl("add.Tensor", &acme_add); }
//   OPD_LIBRARY_IMPL_PRIVATEUSE(_, m) { m.fallback(&opd::cpu_fallback); }

#include <optional>
#include <source_location>
#include <string>
#include <string_view>

#include "opd/device_type.h"
#include "opd/dispatch_key.h"
#include "opd/export.h"
#include "opd/library.h"

namespace opd {

// Note [Vendor slots]
// PyTorch has one vendor slot, PrivateUse1, named once per process. opdispatch has the three
// PyTorch's enum reserves, and a plugin claims one by name at load:
//   - register_privateuse_backend(name) takes the first free slot its manifest allows, or the
//     one given; the calling plugin (the one the plugin manager is loading on this thread) holds
//     it. Outside a plugin load (an executable, a test, Python) the holder is the process, for
//     good, as torch's rename_privateuse1_backend; register_privateuse1_backend is such a naming
//     of PrivateUse1 and keeps its rules.
//   - A name is one slot's: claiming a name another holder has, or a slot another holder has, is
//     a PluginError naming the holder and the slot; no free slot is a PluginError listing the
//     holders. The same plugin claiming its name again (a reload, or the load after an unload
//     whose tensors still live) gets its slot back. A plugin may claim the name the process gave
//     a slot (rename first, then load the backend, as with torch): it serves that slot.
//   - A plugin's hold ends with the residency of the loads that claimed it: once the plugin is
//     unloaded and its tensors, guards and kernels in flight are gone (the library's last
//     reference, core/src/plugins/plugin_residency.h). Until then the name stays, so that its
//     tensors still print and move as "acme"; after it the slot is free and its name the default
//     ("privateusetwo"), so a different plugin can claim it.
// The manifest: a plugin that claims any free slot declares `PrivateUse` in its dispatch_keys
// (it cannot know the slot), and the slot it gets counts as declared for that load (Note
// [Declared dispatch keys]); a plugin that declares PrivateUse2 itself may claim only that slot.
// Its kernels go to the slot it holds through OPD_LIBRARY_IMPL_PRIVATEUSE, which resolves the key
// when the block runs, after the plugin body's claim: one binary serves whichever slot it got.
// So two devices built from one source are two plugins (two names, two libraries: their globals,
// allocation counters and self reference are their own); tests/vendor_device builds acme twice.
// Names are device strings: letters and underscores, not cpu, cuda, meta or a slot's default.

// Claims vendor slot `slot` (PrivateUse1..3), or the first free one, under `name` for the calling
// plugin (the process outside a plugin load); returns the slot. Throws ValueError for a name that
// cannot be a device string or is built in, PluginError for a taken name or slot, or none free.
// Thread-safe.
OPD_API DeviceType register_privateuse_backend(std::string_view name,
                                               std::optional<DeviceType> slot = std::nullopt);

// The slot the plugin being loaded on this thread holds (the process's outside a load). Throws
// PluginError when it holds none or several.
OPD_API DeviceType claimed_privateuse_slot();

// Who holds `slot`: "plugin 'acme_device'", "the process", or "" when it is free.
OPD_API std::string privateuse_slot_holder(DeviceType slot);

namespace detail {
// An OPD_LIBRARY_IMPL_PRIVATEUSE block: `lib` (the block's Library, made without a key) becomes
// the IMPL library of `ns` for the claimed slot's key, then the block runs on it.
inline void run_privateuse_library_init(Library& lib, const char* ns, LibraryInitFn block,
                                        std::source_location loc) {
  lib = Library(Library::IMPL, ns, backend_key_for(claimed_privateuse_slot()), loc);
  block(lib);
}
}  // namespace detail
}  // namespace opd

// OPD_LIBRARY_IMPL_PRIVATEUSE(ns, m) { ... } is OPD_LIBRARY_IMPL(ns, PrivateUseN, m) for the slot
// the plugin claimed in its body (Note [Vendor slots]); undone with the plugin's registrations.
#define OPD_LIBRARY_IMPL_PRIVATEUSE(ns, m) \
  OPD_LIBRARY_IMPL_PRIVATEUSE_UID(ns, m, OPD_UID(opd_impl_privateuse_))
#define OPD_LIBRARY_IMPL_PRIVATEUSE_UID(ns, m, uid)                               \
  static void OPD_CONCAT(uid, _init)(::opd::Library&);                            \
  static void OPD_CONCAT(uid, _slot)(::opd::Library & lib) {                      \
    ::opd::detail::run_privateuse_library_init(lib, #ns, &OPD_CONCAT(uid, _init), \
                                               std::source_location::current());  \
  }                                                                               \
  static ::opd::detail::LibraryInit OPD_CONCAT(uid, _static)(                     \
      ::opd::Library::IMPL, #ns, std::nullopt, &OPD_CONCAT(uid, _slot),           \
      std::source_location::current());                                           \
  void OPD_CONCAT(uid, _init)(::opd::Library & m)
