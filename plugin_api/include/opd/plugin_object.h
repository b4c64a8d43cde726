#pragma once

// Objects a plugin hands to the host that must keep the plugin mapped (autograd nodes, the
// per-tensor autograd state): a std::shared_ptr whose control block lives in libopd_core.so.
//
// A shared_ptr made inside a plugin runs its disposal in the plugin; if that disposal dropped the
// last reference on the plugin's library, the library would be unmapped under the code still
// returning from it. Here, as for a Storage (Note [Storage ownership]), the core's control block
// calls the plugin's `destroy` first, while `owner` still pins the plugin, and releases `owner`
// only after `destroy` has returned, from core code.

#include <memory>

#include "opd/export.h"

namespace opd {

// A shared pointer to `object`: when the last copy goes, calls destroy(object), then releases
// `owner` (may be null). REQUIRES: destroy does not throw.
OPD_API std::shared_ptr<void> make_plugin_object(void* object, void (*destroy)(void*),
                                                 std::shared_ptr<void> owner);

// The typed form: `object` is deleted with `delete`. From inside a plugin pass
// opd::this_plugin_reference() as owner.
template <class T>
std::shared_ptr<T> make_plugin_shared(T* object, std::shared_ptr<void> owner) {
  auto destroy = [](void* p) { delete static_cast<T*>(p); };
  return std::shared_ptr<T>(make_plugin_object(object, destroy, std::move(owner)), object);
}

}  // namespace opd
