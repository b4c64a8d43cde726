#pragma once

#include <cstddef>
#include <memory>
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
  // A new storage; see StorageImpl's constructor for ownership of `data`.
  static Storage create(void* data, size_t nbytes, Device device,
                        StorageImpl::DeleterFn deleter = nullptr, void* deleter_ctx = nullptr,
                        std::shared_ptr<void> owner = nullptr) {
    return Storage(
        make_intrusive<StorageImpl>(data, nbytes, device, deleter, deleter_ctx, std::move(owner)));
  }

  bool defined() const { return impl_.defined(); }
  // The accessors below throw Error on an undefined Storage.
  void* data() const { return impl().data(); }
  size_t nbytes() const { return impl().nbytes(); }
  Device device() const { return impl().device(); }
  const std::shared_ptr<void>& owner() const { return impl().owner(); }
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

}  // namespace opd
