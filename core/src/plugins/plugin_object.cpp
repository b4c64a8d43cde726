// See plugin_api/include/opd/plugin_object.h. Everything here is core code: the control block
// made by make_shared<Holder> is instantiated in libopd_core.so, so its disposal runs here.

#include "opd/plugin_object.h"

#include <cstddef>
#include <new>

#include "opd/error.h"

namespace opd {
namespace {

struct Holder {
  Holder(void* o, void (*d)(void*), std::shared_ptr<void> w)
      : object(o), destroy(d), owner(std::move(w)) {}
  Holder(const Holder&) = delete;
  Holder& operator=(const Holder&) = delete;
  void* object;  // null: nothing to destroy (an in-place object whose constructor threw)
  void (*destroy)(void*);
  std::shared_ptr<void> owner;
  ~Holder() {
    if (object != nullptr) destroy(object);
    owner.reset();  // only now may the plugin that provided `destroy` go away
  }
};

// Allocates what std::allocate_shared asks for (the control block holding a Holder) and
// `trailing` more bytes after it, in one block; *where receives the trailing bytes' address.
template <class T>
struct TrailingAllocator {
  using value_type = T;
  size_t trailing;
  void** where;

  TrailingAllocator(size_t n, void** w) : trailing(n), where(w) {}
  template <class U>
  TrailingAllocator(const TrailingAllocator<U>& o) : trailing(o.trailing), where(o.where) {}

  static size_t head() {
    constexpr size_t a = alignof(std::max_align_t);
    return (sizeof(T) + a - 1) / a * a;
  }
  T* allocate(size_t n) {
    OPD_INTERNAL_ASSERT(n == 1, "make_plugin_object_in_place: one control block");
    char* block = static_cast<char*>(::operator new(head() + trailing));
    *where = block + head();
    return reinterpret_cast<T*>(block);
  }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p); }
  template <class U>
  bool operator==(const TrailingAllocator<U>& o) const {
    return trailing == o.trailing && where == o.where;
  }
};

}  // namespace

std::shared_ptr<void> make_plugin_object(void* object, void (*destroy)(void*),
                                         std::shared_ptr<void> owner) {
  auto holder = std::make_shared<Holder>(object, destroy, std::move(owner));
  return std::shared_ptr<void>(std::move(holder), object);
}

std::shared_ptr<void> make_plugin_object_in_place(size_t size, size_t align,
                                                  void (*construct)(void*, void*), void* args,
                                                  void (*destroy)(void*),
                                                  std::shared_ptr<void> owner) {
  OPD_INTERNAL_ASSERT(align <= alignof(std::max_align_t),
                      "make_plugin_object_in_place: alignment {} is not supported", align);
  void* where = nullptr;
  auto holder = std::allocate_shared<Holder>(TrailingAllocator<Holder>(size, &where), nullptr,
                                             destroy, std::move(owner));
  construct(where, args);  // on a throw, holder goes without destroying anything
  holder->object = where;
  return std::shared_ptr<void>(std::move(holder), where);
}

}  // namespace opd
