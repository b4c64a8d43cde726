#pragma once

// Objects a plugin hands to the host that must keep the plugin mapped (autograd nodes, the
// per-tensor autograd state): a std::shared_ptr whose control block lives in libopd_core.so.
//
// A shared_ptr made inside a plugin runs its disposal in the plugin; if that disposal dropped the
// last reference on the plugin's library, the library would be unmapped under the code still
// returning from it. Here, as for a Storage (Note [Storage ownership]), the core's control block
// calls the plugin's `destroy` first, while `owner` still pins the plugin, and releases `owner`
// only after `destroy` has returned, from core code.

#include <cstddef>
#include <memory>
#include <new>
#include <tuple>
#include <utility>

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

// As make_plugin_object, with the object inside the control block's allocation (as
// std::make_shared places it): one allocation instead of two. The core allocates `size` bytes
// (at most alignof(std::max_align_t)-aligned) after its control block and calls
// construct(where, args) there; when that throws, the error propagates, `owner` is released and
// nothing is destroyed. When the last copy goes, destroy(where) runs (it must end the object's
// lifetime without freeing its memory), then `owner` is released.
OPD_API std::shared_ptr<void> make_plugin_object_in_place(
    size_t size, size_t align, void (*construct)(void* where, void* args), void* args,
    void (*destroy)(void*), std::shared_ptr<void> owner);

// The typed form: a T made from `args` in place; `destroy` (null: T's destructor) receives the
// T*. From inside a plugin pass opd::this_plugin_reference() as owner.
template <class T, class... Args>
std::shared_ptr<T> allocate_plugin_shared(void (*destroy)(void*), std::shared_ptr<void> owner,
                                          Args&&... args) {
  static_assert(alignof(T) <= alignof(std::max_align_t), "over-aligned plugin objects");
  auto packed = std::forward_as_tuple(std::forward<Args>(args)...);
  auto construct = [](void* where, void* packed_args) {
    std::apply([where](auto&&... a) { ::new (where) T(std::forward<decltype(a)>(a)...); },
               std::move(*static_cast<decltype(packed)*>(packed_args)));
  };
  if (destroy == nullptr) destroy = [](void* p) { static_cast<T*>(p)->~T(); };
  std::shared_ptr<void> block = make_plugin_object_in_place(sizeof(T), alignof(T), construct,
                                                            &packed, destroy, std::move(owner));
  T* object = static_cast<T*>(block.get());
  return std::shared_ptr<T>(std::move(block), object);
}

}  // namespace opd
