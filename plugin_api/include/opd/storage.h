#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>

#include "opd/device.h"
#include "opd/error.h"
#include "opd/export.h"
#include "opd/intrusive_ptr.h"

namespace opd {

// The memory under one or more tensors: a data pointer, its size in bytes and how to free it.
//
// Note [Storage ownership]
// Memory is usually allocated by a plugin, and the plugin may be unloaded while tensors it made
// are still alive. So a storage carries, besides its deleter, an opaque `owner`: a handle the
// plugin manager gives the plugin, whose last copy lets the manager unmap the plugin. The
// destructor (compiled into libopd_core.so, never into a plugin, so that the code running it
// stays mapped) calls the deleter first, while the owner still pins the plugin's code, and only
// then releases the owner.
//
// Note [Resizable storage]
// resize_ grows a tensor by moving it to a new storage (storages have a fixed size). That is
// wrong for memory someone else also reads: an array that numpy, DLPack or a buffer consumer
// holds, or the caller's memory under from_blob, from_numpy, frombuffer or from_dlpack. Such a
// storage is not resizable (PyTorch's StorageImpl::resizable()): resize_ and out= resizing throw
// "Trying to resize storage that is not resizable" when the tensor must grow (shrinking, or
// growing within the storage's bytes, is allowed, as in PyTorch), on every backend
// (common/factory_shape.h). A storage over memory it borrows (from_blob without a deleter) is
// made non-resizable; an importer (from_numpy, from_dlpack) and an exporter (Tensor.numpy(),
// __dlpack__) mark theirs with set_resizable(false), and an exporter also holds the Storage,
// not only the tensor, so the memory it handed out stays alive whatever later happens to the
// tensor.
// The flag is an atomic in detail::FlaggedStorageImpl, the type Storage::create makes since
// plugin ABI 3.3, and not a member of StorageImpl: a plugin built before 3.3 constructs
// StorageImpl with its own inline copy of the constructor, which would leave a new member
// uninitialised. Its storages keep the rule of before 3.3 (resizable when the storage owns its
// memory or has none, Storage::create's default) and cannot be marked; an export still holds
// them, so a resize leaves the exported memory alive, only no longer the tensor's.
class OPD_API StorageImpl : public intrusive_ptr_target {
 public:
  // Frees `data`; `ctx` is the deleter_ctx given at construction. Must not throw.
  using DeleterFn = void (*)(void* data, void* ctx);

  // Wraps `nbytes` bytes at `data` on `device`. With a null `deleter` the storage does not own
  // the memory (from_blob over a caller's buffer): the caller keeps it alive as long as the
  // storage lives. Otherwise the storage owns it and calls deleter(data, deleter_ctx) exactly
  // once, when the last reference goes, and then releases `owner` (may be null). `data` may be
  // null (Meta tensors have sizes but no memory).
  StorageImpl(void* data, size_t nbytes, Device device, DeleterFn deleter = nullptr,
              void* deleter_ctx = nullptr, std::shared_ptr<void> owner = nullptr) noexcept
      : data_(data),
        nbytes_(nbytes),
        deleter_(deleter),
        deleter_ctx_(deleter_ctx),
        owner_(std::move(owner)),
        device_(device) {}
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
  // Runs the deleter, then releases the owner. See Note [Storage ownership].
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  DeleterFn deleter() const { return deleter_; }
  void* deleter_ctx() const { return deleter_ctx_; }
  const std::shared_ptr<void>& owner() const { return owner_; }

  // Whether resize_ may move the tensors on this storage to a new, larger one (PyTorch's
  // StorageImpl::resizable()); see Note [Resizable storage]. Thread-safe.
  bool resizable() const noexcept;
  // Marks the storage resizable or not; an exporter calls set_resizable(false) before it hands
  // the memory out. Returns false, changing nothing, for a storage that has no flag: one made
  // by a plugin built before ABI 3.3 (Note [Resizable storage]). Thread-safe.
  bool set_resizable(bool resizable) noexcept;

 private:
  void* const data_;
  const size_t nbytes_;
  const DeleterFn deleter_;  // null: data_ is borrowed
  void* const deleter_ctx_;
  std::shared_ptr<void> owner_;  // released after deleter_ has run, never before
  const Device device_;
};

// A shared handle on a StorageImpl (null when default-constructed). Copies share the memory.
// Thread-safety: as intrusive_ptr; the memory itself is not synchronised.
class Storage {
 public:
  Storage() = default;
  explicit Storage(intrusive_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  // A new storage; see StorageImpl's constructor for ownership of `data`. Unless `resizable`
  // says otherwise, it is resizable when it owns its memory (a deleter) or has none (null
  // data), and not over memory it borrows; whoever wraps memory that someone else also reads
  // passes false (Note [Resizable storage]).
  static Storage create(void* data, size_t nbytes, Device device,
                        StorageImpl::DeleterFn deleter = nullptr, void* deleter_ctx = nullptr,
                        std::shared_ptr<void> owner = nullptr,
                        std::optional<bool> resizable = std::nullopt);

  bool defined() const { return impl_.defined(); }
  // The accessors below throw Error on an undefined Storage.
  void* data() const { return impl().data(); }
  size_t nbytes() const { return impl().nbytes(); }
  Device device() const { return impl().device(); }
  const std::shared_ptr<void>& owner() const { return impl().owner(); }
  bool resizable() const { return impl().resizable(); }
  // See StorageImpl::set_resizable. Throws Error on an undefined Storage.
  bool set_resizable(bool resizable) const {
    OPD_CHECK(impl_.defined(), "Storage: accessed an undefined Storage");
    return impl_->set_resizable(resizable);
  }
  // Number of handles on the storage (tensors and views count one each); 0 when undefined.
  size_t use_count() const { return impl_.use_count(); }
  bool is_same(const Storage& o) const { return impl_ == o.impl_; }
  StorageImpl* unsafe_get_impl() const { return impl_.get(); }

 private:
  const StorageImpl& impl() const {
    OPD_CHECK(impl_.defined(), "Storage: accessed an undefined Storage");
    return *impl_;
  }
  intrusive_ptr<StorageImpl> impl_;
};

namespace detail {

// A StorageImpl with the resizable flag: what Storage::create makes since plugin ABI 3.3. A
// distinct type because plugins built before 3.3 construct StorageImpl themselves, without
// the flag; see Note [Resizable storage]. Its member sits in StorageImpl's tail padding, so it
// is no larger (pinned in abi.h).
class OPD_API FlaggedStorageImpl final : public StorageImpl {
 public:
  FlaggedStorageImpl(void* data, size_t nbytes, Device device, DeleterFn deleter, void* deleter_ctx,
                     std::shared_ptr<void> owner, bool resizable) noexcept
      : StorageImpl(data, nbytes, device, deleter, deleter_ctx, std::move(owner)),
        resizable_(resizable) {}
  // Out of line so that the vtable lives in libopd_core.so (see intrusive_ptr_target).
  ~FlaggedStorageImpl() override;

 private:
  friend class opd::StorageImpl;
  // Relaxed: it guards no other memory. An exporter holds the storage it exports, so a resize
  // that misses a concurrent set_resizable(false) leaves the exported memory alive.
  std::atomic<bool> resizable_;
};

}  // namespace detail

inline Storage Storage::create(void* data, size_t nbytes, Device device,
                               StorageImpl::DeleterFn deleter, void* deleter_ctx,
                               std::shared_ptr<void> owner, std::optional<bool> resizable) {
  const bool flag = resizable.value_or(deleter != nullptr || data == nullptr);
  return Storage(make_intrusive<detail::FlaggedStorageImpl>(data, nbytes, device, deleter,
                                                            deleter_ctx, std::move(owner), flag));
}

}  // namespace opd
