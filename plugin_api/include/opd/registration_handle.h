#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace opd {

// Owns one registration (a def, an impl, a fallback, a listener...). Destroying or reset()ting
// the handle undoes the registration. Move-only. Not thread-safe itself; the dispatcher
// serialises the undo with every other registration.
//
// The undo action is stored inline when it fits (the dispatcher's always do), so that a
// registration costs no allocation for its handle.
class [[nodiscard]] RegistrationHandle {
 public:
  RegistrationHandle() = default;
  template <class F>
  requires(!std::is_same_v<std::decay_t<F>, RegistrationHandle> &&
           std::is_invocable_v<F&>) explicit RegistrationHandle(F&& undo) {
    using D = std::decay_t<F>;
    if constexpr (sizeof(D) <= kInline && alignof(D) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<D>) {
      new (buffer_) D(std::forward<F>(undo));
      ops_ = &kInlineOps<D>;
    } else {
      new (buffer_) std::unique_ptr<D>(std::make_unique<D>(std::forward<F>(undo)));
      ops_ = &kHeapOps<D>;
    }
  }
  RegistrationHandle(RegistrationHandle&& o) noexcept { take(o); }
  RegistrationHandle& operator=(RegistrationHandle&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  RegistrationHandle(const RegistrationHandle&) = delete;
  RegistrationHandle& operator=(const RegistrationHandle&) = delete;
  ~RegistrationHandle() { reset(); }

  // Undoes the registration now. A no-op on an empty or moved-from handle.
  void reset() {
    if (const Ops* ops = std::exchange(ops_, nullptr)) {
      // Destroy the action even if it throws, and only once.
      struct Destroy {
        const Ops* ops;
        void* p;
        ~Destroy() { ops->destroy(p); }
      } destroy{ops, buffer_};
      ops->run(buffer_);
    }
  }
  bool active() const { return ops_ != nullptr; }

 private:
  static constexpr std::size_t kInline = 48;
  struct Ops {
    void (*run)(void*);
    void (*move)(void* from, void* to) noexcept;
    void (*destroy)(void*) noexcept;
  };
  template <class D>
  static constexpr Ops kInlineOps = {[](void* p) { (*static_cast<D*>(p))(); },
                                     [](void* from, void* to) noexcept {
                                       new (to) D(std::move(*static_cast<D*>(from)));
                                       static_cast<D*>(from)->~D();
                                     },
                                     [](void* p) noexcept { static_cast<D*>(p)->~D(); }};
  template <class D>
  static constexpr Ops kHeapOps = {
      [](void* p) { (**static_cast<std::unique_ptr<D>*>(p))(); },
      [](void* from, void* to) noexcept {
        auto* f = static_cast<std::unique_ptr<D>*>(from);
        new (to) std::unique_ptr<D>(std::move(*f));
        f->~unique_ptr();
      },
      [](void* p) noexcept { static_cast<std::unique_ptr<D>*>(p)->~unique_ptr(); }};

  void take(RegistrationHandle& o) noexcept {
    if (o.ops_) {
      o.ops_->move(o.buffer_, buffer_);
      ops_ = std::exchange(o.ops_, nullptr);
    }
  }

  alignas(std::max_align_t) unsigned char buffer_[kInline];
  const Ops* ops_ = nullptr;
};

}  // namespace opd
