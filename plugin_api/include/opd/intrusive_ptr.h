#pragma once

#include <atomic>
#include <compare>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>

namespace opd {

template <class T>
class intrusive_ptr;

namespace detail {
template <class U, class T>
concept PointerConvertibleTo = std::is_convertible_v<U*, T*>;
}  // namespace detail

// Base of objects shared through intrusive_ptr: the reference count lives in the object, so a
// handle is one pointer and a raw pointer can be turned back into a handle (reclaim_copy).
//
// Objects are made by make_intrusive() and destroyed, through the virtual destructor, when the
// last intrusive_ptr lets go. A class whose objects may outlive the library that created them
// (a plugin can be unloaded) must define its destructor out of line in a library that stays
// loaded, so that its vtable lives there: TensorImpl, StorageImpl and VersionCounter do.
class intrusive_ptr_target {
 protected:
  intrusive_ptr_target() noexcept = default;
  // A copy is a new object: it starts unowned whatever the count of the original.
  intrusive_ptr_target(const intrusive_ptr_target&) noexcept {}
  intrusive_ptr_target& operator=(const intrusive_ptr_target&) noexcept { return *this; }
  virtual ~intrusive_ptr_target() = default;

 private:
  template <class T>
  friend class intrusive_ptr;
  // Number of intrusive_ptr owning this object: 1 when make_intrusive returns, 0 only before
  // (and while the destructor runs).
  mutable std::atomic<size_t> refcount_{0};
};

// An owning handle on an intrusive_ptr_target, like std::shared_ptr without the control block.
// Copying increments the count (relaxed: a new owner needs no ordering, it already holds a
// reference); destruction decrements it (acq_rel: the last owner must see every write made
// through the others before it deletes). Moving touches no count.
//
// Thread-safety: distinct handles on one object may be copied and destroyed concurrently; one
// handle must not be written while another thread reads it (as std::shared_ptr).
template <class T>
class intrusive_ptr {
 public:
  using element_type = T;

  constexpr intrusive_ptr() noexcept = default;
  constexpr intrusive_ptr(std::nullptr_t) noexcept {}
  intrusive_ptr(const intrusive_ptr& o) noexcept : target_(o.target_) { retain(target_); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : target_(std::exchange(o.target_, nullptr)) {}
  template <detail::PointerConvertibleTo<T> U>
  intrusive_ptr(const intrusive_ptr<U>& o) noexcept : target_(o.target_) {
    retain(target_);
  }
  template <detail::PointerConvertibleTo<T> U>
  intrusive_ptr(intrusive_ptr<U>&& o) noexcept : target_(std::exchange(o.target_, nullptr)) {}
  ~intrusive_ptr() { reset(); }

  intrusive_ptr& operator=(const intrusive_ptr& o) noexcept {
    intrusive_ptr(o).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept {
    intrusive_ptr(std::move(o)).swap(*this);
    return *this;
  }
  template <detail::PointerConvertibleTo<T> U>
  intrusive_ptr& operator=(intrusive_ptr<U> o) noexcept {
    intrusive_ptr(std::move(o)).swap(*this);
    return *this;
  }

  T* get() const noexcept { return target_; }
  T& operator*() const noexcept { return *target_; }
  T* operator->() const noexcept { return target_; }
  explicit operator bool() const noexcept { return target_ != nullptr; }
  bool defined() const noexcept { return target_ != nullptr; }

  // Drops this handle's reference (deleting the object if it was the last) and becomes null.
  void reset() noexcept {
    if (target_ != nullptr) {
      release_ref(target_);
      target_ = nullptr;
    }
  }
  void swap(intrusive_ptr& o) noexcept { std::swap(target_, o.target_); }

  // Number of owners; 0 for a null handle. Exact only when no other thread changes it.
  size_t use_count() const noexcept {
    return target_ ? base(target_)->refcount_.load(std::memory_order_relaxed) : 0;
  }
  bool unique() const noexcept { return use_count() == 1; }

  // Gives up ownership without decrementing: the caller owns one reference and must hand it
  // back through reclaim().
  [[nodiscard]] T* release() noexcept { return std::exchange(target_, nullptr); }
  // Adopts a reference obtained from release(). REQUIRES: `owning` is null or came from
  // release() and has not been reclaimed since.
  static intrusive_ptr reclaim(T* owning) noexcept { return intrusive_ptr(owning, Adopt{}); }
  // A new owner of an object someone else keeps alive (a raw `this`, a pointer from get()).
  // REQUIRES: `non_owning` is null or currently owned by at least one intrusive_ptr.
  static intrusive_ptr reclaim_copy(T* non_owning) noexcept {
    retain(non_owning);
    return intrusive_ptr(non_owning, Adopt{});
  }

  template <class U, class... Args>
  friend intrusive_ptr<U> make_intrusive(Args&&... args);

  friend bool operator==(const intrusive_ptr& a, const intrusive_ptr& b) noexcept {
    return a.target_ == b.target_;
  }
  friend bool operator==(const intrusive_ptr& a, std::nullptr_t) noexcept {
    return a.target_ == nullptr;
  }
  friend std::strong_ordering operator<=>(const intrusive_ptr& a, const intrusive_ptr& b) noexcept {
    return std::compare_three_way()(a.target_, b.target_);
  }

 private:
  template <class U>
  friend class intrusive_ptr;
  struct Adopt {};
  intrusive_ptr(T* p, Adopt) noexcept : target_(p) {}
  static intrusive_ptr adopt_new(T* fresh) noexcept {
    base(fresh)->refcount_.store(1, std::memory_order_relaxed);
    return intrusive_ptr(fresh, Adopt{});
  }

  static const intrusive_ptr_target* base(const T* p) noexcept {
    static_assert(std::is_base_of_v<intrusive_ptr_target, T>,
                  "intrusive_ptr<T> requires T to derive from intrusive_ptr_target");
    return p;
  }
  static void retain(T* p) noexcept {
    if (p != nullptr) base(p)->refcount_.fetch_add(1, std::memory_order_relaxed);
  }
  static void release_ref(T* p) noexcept {
    if (base(p)->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p;
  }

  T* target_ = nullptr;
};

// Creates a T owned by the returned handle (count 1).
template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>::adopt_new(new T(std::forward<Args>(args)...));
}

}  // namespace opd

template <class T>
struct std::hash<opd::intrusive_ptr<T>> {
  size_t operator()(const opd::intrusive_ptr<T>& p) const noexcept {
    return std::hash<T*>()(p.get());
  }
};
