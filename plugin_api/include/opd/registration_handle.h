#pragma once

#include <functional>
#include <utility>

namespace opd {

// Owns one registration (a def, an impl, a fallback, a listener...). Destroying or reset()ting
// the handle undoes the registration. Move-only. Not thread-safe itself; the dispatcher
// serialises the undo with every other registration.
class [[nodiscard]] RegistrationHandle {
 public:
  RegistrationHandle() = default;
  explicit RegistrationHandle(std::function<void()> undo) : undo_(std::move(undo)) {}
  RegistrationHandle(RegistrationHandle&& o) noexcept : undo_(std::exchange(o.undo_, nullptr)) {}
  RegistrationHandle& operator=(RegistrationHandle&& o) noexcept {
    if (this != &o) {
      reset();
      undo_ = std::exchange(o.undo_, nullptr);
    }
    return *this;
  }
  RegistrationHandle(const RegistrationHandle&) = delete;
  RegistrationHandle& operator=(const RegistrationHandle&) = delete;
  ~RegistrationHandle() { reset(); }

  // Undoes the registration now. A no-op on an empty or moved-from handle.
  void reset() {
    if (auto undo = std::exchange(undo_, nullptr)) undo();
  }
  bool active() const { return static_cast<bool>(undo_); }

 private:
  std::function<void()> undo_;
};

}  // namespace opd
