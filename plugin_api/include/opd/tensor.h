#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "opd/array_ref.h"
#include "opd/device.h"
#include "opd/dispatch_key_set.h"
#include "opd/error.h"
#include "opd/export.h"
#include "opd/generator.h"  // the `Generator?` arguments of tensor_methods.inc
#include "opd/intrusive_ptr.h"
#include "opd/layout.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"
#include "opd/storage.h"

namespace opd {

// A read-only view of int64 values (sizes, strides, int[] arguments); see ArrayRef.
using IntArrayRef = ArrayRef<int64_t>;

namespace detail {
[[noreturn]] OPD_API void throw_dim_out_of_range(int64_t dim, int64_t ndim, bool wrap_scalar);
[[noreturn]] OPD_API void throw_undefined_tensor(const char* method);
[[noreturn]] OPD_API void throw_dtype_mismatch(ScalarType expected, ScalarType found);
}  // namespace detail

// `dim` in [-ndim, ndim) made non-negative. A 0-dim tensor accepts -1 and 0 (meaning 0) when
// wrap_scalar, as PyTorch's maybe_wrap_dim. Throws IndexError:
//   "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
//   "Dimension specified as 0 but tensor has no dimensions" (ndim 0, !wrap_scalar)
inline int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool wrap_scalar = true) {
  if (dim >= -ndim && dim < ndim) return dim < 0 ? dim + ndim : dim;
  if (ndim == 0 && wrap_scalar && (dim == 0 || dim == -1)) return 0;
  detail::throw_dim_out_of_range(dim, ndim, wrap_scalar);
}

// The strides of a dense row-major tensor of these sizes (size-0 and size-1 dimensions count as
// 1, as in PyTorch): [2, 3, 4] -> [12, 4, 1].
OPD_API std::vector<int64_t> contiguous_strides(IntArrayRef sizes);

// The version of a tensor's data, shared by a tensor and all its views: every in-place change
// bumps it, and autograd compares it with the version it saved. Increments are relaxed: they are
// never lost, and a reader on another thread synchronises with the writer by other means (the
// autograd engine's queue) before it compares.
class OPD_API VersionCounter : public intrusive_ptr_target {
 public:
  VersionCounter() noexcept = default;
  ~VersionCounter() override;
  uint32_t current() const noexcept { return version_.load(std::memory_order_relaxed); }
  void bump() noexcept { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> version_{0};
};

namespace detail {

// The sizes and strides of a tensor in one buffer, held inline up to kInlineDims dimensions so
// that making and copying the metadata of an ordinary tensor never allocates.
class SizesAndStrides {
 public:
  static constexpr size_t kInlineDims = 5;

  SizesAndStrides() noexcept : dim_(0) {}
  // REQUIRES: sizes.size() == strides.size().
  SizesAndStrides(IntArrayRef sizes, IntArrayRef strides) : dim_(sizes.size()) {
    if (!is_inline()) heap_ = new int64_t[2 * dim_];
    std::copy(sizes.begin(), sizes.end(), sizes_data());
    std::copy(strides.begin(), strides.end(), strides_data());
  }
  SizesAndStrides(const SizesAndStrides& o) : SizesAndStrides(o.sizes(), o.strides()) {}
  SizesAndStrides(SizesAndStrides&& o) noexcept : dim_(0) { move_from(std::move(o)); }
  SizesAndStrides& operator=(const SizesAndStrides& o) {
    if (this != &o) *this = SizesAndStrides(o);
    return *this;
  }
  SizesAndStrides& operator=(SizesAndStrides&& o) noexcept {
    if (this != &o) {
      free_heap();
      move_from(std::move(o));
    }
    return *this;
  }
  ~SizesAndStrides() { free_heap(); }

  size_t dim() const noexcept { return dim_; }
  IntArrayRef sizes() const noexcept { return {sizes_data(), dim_}; }
  IntArrayRef strides() const noexcept { return {strides_data(), dim_}; }

 private:
  bool is_inline() const noexcept { return dim_ <= kInlineDims; }
  int64_t* sizes_data() noexcept { return is_inline() ? inline_ : heap_; }
  int64_t* strides_data() noexcept { return is_inline() ? inline_ + kInlineDims : heap_ + dim_; }
  const int64_t* sizes_data() const noexcept { return is_inline() ? inline_ : heap_; }
  const int64_t* strides_data() const noexcept {
    return is_inline() ? inline_ + kInlineDims : heap_ + dim_;
  }
  void free_heap() noexcept {
    if (!is_inline()) delete[] heap_;
    dim_ = 0;
  }
  // REQUIRES: *this holds no heap buffer. Leaves `o` empty when it held one.
  void move_from(SizesAndStrides&& o) noexcept {
    dim_ = o.dim_;
    if (is_inline()) {
      std::copy_n(o.inline_, dim_, inline_);
      std::copy_n(o.inline_ + kInlineDims, dim_, inline_ + kInlineDims);
    } else {
      heap_ = o.heap_;
      o.dim_ = 0;
    }
  }

  size_t dim_;
  // dim_ <= kInlineDims: sizes in inline_[0, dim_), strides in inline_[kInlineDims, +dim_).
  // Otherwise heap_ holds 2 * dim_ values: sizes, then strides.
  union {
    int64_t inline_[2 * kInlineDims] = {};
    int64_t* heap_;
  };
};

}  // namespace detail

// The object behind a Tensor: metadata over a Storage. Plugins read it through Tensor; they make
// one through make_tensor() / make_view(), which check the geometry.
//
// Thread-safety: reading is safe from any thread; the setters are not synchronised with readers
// (as in PyTorch, metadata changes happen inside one kernel, on tensors it owns).
class OPD_API TensorImpl : public intrusive_ptr_target {
 public:
  // REQUIRES: the geometry was checked (make_tensor and make_view do); `version_counter` is
  // non-null. The key set is key_set_for_device(device.type).
  TensorImpl(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
             ScalarType dtype, Device device, intrusive_ptr<VersionCounter> version_counter);
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
  // Out of line so that the vtable lives in libopd_core.so (see intrusive_ptr_target).
  ~TensorImpl() override;

  // The dispatch hot path reads this: a plain member, no computation.
  DispatchKeySet key_set() const noexcept { return key_set_; }
  IntArrayRef sizes() const noexcept { return sizes_and_strides_.sizes(); }
  IntArrayRef strides() const noexcept { return sizes_and_strides_.strides(); }
  int64_t dim() const noexcept { return static_cast<int64_t>(sizes_and_strides_.dim()); }
  int64_t numel() const noexcept { return numel_; }
  int64_t storage_offset() const noexcept { return storage_offset_; }
  ScalarType dtype() const noexcept { return dtype_; }
  Device device() const noexcept { return device_; }
  const Storage& storage() const noexcept { return storage_; }
  bool is_contiguous() const noexcept { return is_contiguous_; }
  // The address of element 0: storage data + storage_offset * element size; null when the
  // storage has no memory (Meta).
  void* data() const noexcept {
    auto* base = static_cast<char*>(storage_.unsafe_get_impl()->data());
    return base ? base + storage_offset_ * static_cast<int64_t>(element_size(dtype_)) : nullptr;
  }
  const intrusive_ptr<VersionCounter>& version_counter() const noexcept { return version_counter_; }

  // The autograd plugin's per-tensor state, opaque to everyone else; null until it sets one.
  // Views do not inherit it. The shared_ptr's deleter is plugin code: the plugin that sets it
  // must keep itself loaded while such pointers live (see Note [Storage ownership]).
  const std::shared_ptr<void>& autograd_meta() const noexcept { return autograd_meta_; }
  void set_autograd_meta(std::shared_ptr<void> meta) noexcept { autograd_meta_ = std::move(meta); }

  // Changes the geometry in place (resize_, as_strided_, set_). Checks it as make_tensor does
  // against the current storage; throws ValueError and leaves the tensor unchanged if it fails.
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // Replaces the storage and the geometry at once (resize_ growing past the storage, set_).
  // Checks the geometry against the new storage as make_tensor does; throws ValueError and
  // leaves the tensor unchanged if it fails. REQUIRES: storage is on this tensor's device.
  void set_storage_and_geometry(Storage storage, IntArrayRef sizes, IntArrayRef strides,
                                int64_t storage_offset);

  // A 0-dim tensor made from a number (the `other` of add.Scalar, a Python scalar): weaker than
  // any tensor in type promotion, as PyTorch's is_wrapped_number.
  bool is_wrapped_number() const noexcept { return is_wrapped_number_; }
  void set_wrapped_number(bool wrapped) noexcept { is_wrapped_number_ = wrapped; }

  // Replaces the key set (a test or a wrapper backend marking its tensors). Nothing checks that
  // the set suits the device; the dispatcher trusts it.
  void unsafe_set_key_set(DispatchKeySet ks) noexcept { key_set_ = ks; }

 private:
  void refresh_numel_and_contiguity() noexcept;

  // First, so that dispatch reads it from the cache line that holds the reference count.
  DispatchKeySet key_set_;
  Device device_;
  ScalarType dtype_;
  bool is_contiguous_;  // cached: row-major dense, ignoring size-1 dimensions
  bool is_wrapped_number_ = false;
  int64_t storage_offset_;
  int64_t numel_;    // product of sizes, cached
  Storage storage_;  // always defined
  detail::SizesAndStrides sizes_and_strides_;
  intrusive_ptr<VersionCounter> version_counter_;  // shared with every view; never null
  std::shared_ptr<void> autograd_meta_;
};

// A handle on a TensorImpl, reference-counted; the default Tensor is undefined. Copying shares
// the tensor (as torch.Tensor assignment does), moving touches no count.
//
// Every accessor except defined(), key_set(), is_same(), use_count(), unsafe_get_impl() and
// str() throws Error "<method>() called on an undefined Tensor" on an undefined Tensor.
// There is no operator==: comparing tensors is an operator (aten::eq); identity is is_same().
// Thread-safety: as intrusive_ptr and TensorImpl.
class OPD_API Tensor {
 public:
  Tensor() noexcept = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) noexcept : impl_(std::move(impl)) {}

  bool defined() const noexcept { return impl_.defined(); }
  // The dispatch keys of the tensor; empty for an undefined Tensor.
  DispatchKeySet key_set() const noexcept { return impl_ ? impl_->key_set() : DispatchKeySet(); }

  IntArrayRef sizes() const { return impl("sizes").sizes(); }
  IntArrayRef strides() const { return impl("strides").strides(); }
  // Negative dims count from the end. Throws IndexError (see maybe_wrap_dim), with
  // "Dimension specified as 0 but tensor has no dimensions" for a 0-dim tensor.
  int64_t size(int64_t dim) const {
    const TensorImpl& i = impl("size");
    return i.sizes()[maybe_wrap_dim(dim, i.dim(), /*wrap_scalar=*/false)];
  }
  int64_t stride(int64_t dim) const {
    const TensorImpl& i = impl("stride");
    return i.strides()[maybe_wrap_dim(dim, i.dim(), /*wrap_scalar=*/false)];
  }
  int64_t dim() const { return impl("dim").dim(); }
  int64_t numel() const { return impl("numel").numel(); }
  ScalarType scalar_type() const { return impl("scalar_type").dtype(); }
  ScalarType dtype() const { return impl("dtype").dtype(); }
  size_t element_size() const { return opd::element_size(impl("element_size").dtype()); }
  Device device() const { return impl("device").device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_meta() const { return device().is_meta(); }
  const Storage& storage() const { return impl("storage").storage(); }
  int64_t storage_offset() const { return impl("storage_offset").storage_offset(); }
  bool is_contiguous() const { return impl("is_contiguous").is_contiguous(); }

  // The address of the first element (null for a tensor without memory).
  void* data_ptr() const { return impl("data_ptr").data(); }
  // The same, typed. Throws TypeError "expected scalar type Float but found Int" when T is not
  // the tensor's element type (T: one of the types cpp_type_to_scalar_type() knows).
  template <class T>
  T* data_ptr() const {
    const TensorImpl& i = impl("data_ptr");
    constexpr ScalarType expected = cpp_type_to_scalar_type<T>();
    if (i.dtype() != expected) detail::throw_dtype_mismatch(expected, i.dtype());
    return static_cast<T*>(i.data());
  }

  // The version counter, shared with views (see VersionCounter).
  uint32_t version() const { return impl("version").version_counter()->current(); }
  void bump_version() const { impl("bump_version").version_counter()->bump(); }

  // Same TensorImpl (two undefined tensors are the same).
  bool is_same(const Tensor& o) const noexcept { return impl_ == o.impl_; }
  // Number of Tensor handles on the TensorImpl; 0 when undefined.
  size_t use_count() const noexcept { return impl_.use_count(); }
  TensorImpl* unsafe_get_impl() const noexcept { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& get_intrusive_ptr() const noexcept { return impl_; }

  // "Tensor(sizes=[2, 3], dtype=Float, device=cpu)"; "Tensor(undefined)".
  std::string str() const;

  // The value of a one-element tensor (aten::item), as T.
  template <class T>
  T item() const {
    return item().to<T>();
  }

  // The operators of manifests/native_functions.yaml with `variants: method` (x.add(y),
  // x.add_(y), x.view({2, 3}), x.sum()), generated by opd-gen; defined in libopd_core.so, each a
  // call through the dispatcher. `Scalar item() const` is among them.
#include "opd/tensor_methods.inc"

  // Autograd, served by the autograd plugin (without it these fail with the dispatcher's
  // missing-kernel error); see opd/autograd.h. backward() is aten::_backward with no inputs;
  // grad() is the accumulated gradient (undefined when none).
  void backward(const std::optional<Tensor>& gradient = std::nullopt,
                std::optional<bool> retain_graph = std::nullopt, bool create_graph = false) const;
  Tensor grad() const;
  bool requires_grad() const;

 private:
  const TensorImpl& impl(const char* method) const {
    if (!impl_) [[unlikely]]
      detail::throw_undefined_tensor(method);
    return *impl_;
  }
  intrusive_ptr<TensorImpl> impl_;
};

inline std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << t.str(); }

// A read-only view of tensors (`Tensor[]` arguments): opd::cat({a, b}).
using TensorList = ArrayRef<Tensor>;

// A tensor over `storage`. Throws ValueError, naming make_tensor, when the storage is undefined
// or on another device, dtype is Undefined, sizes and strides differ in length, a size or stride
// is negative, storage_offset is negative, or the elements reach past storage.nbytes():
//   "make_tensor: sizes [4, 4], strides [4, 1], storage offset 0, and itemsize 4 requiring a
//    storage size of 64 are out of bounds for storage of size 48"
OPD_API Tensor make_tensor(Storage storage, IntArrayRef sizes, IntArrayRef strides,
                           int64_t storage_offset, ScalarType dtype, Device device);

// A view of `base`: same storage, same version counter, dtype, device and key set; new
// geometry, checked as make_tensor does against base's storage. No autograd meta.
// Throws ValueError, naming make_view.
OPD_API Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides,
                         int64_t storage_offset);

// A tensor over memory the caller owns and keeps alive as long as the tensor and its views live
// (nothing frees it). Contiguous unless strides are given. Throws as make_tensor does. Its
// storage is not resizable unless `data` is null (Note [Resizable storage]).
OPD_API Tensor from_blob(void* data, IntArrayRef sizes, ScalarType dtype,
                         Device device = Device(DeviceType::CPU));
OPD_API Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                         Device device = Device(DeviceType::CPU));
// A tensor that owns `data`: deleter(data, deleter_ctx) runs once when the last tensor or view
// on it goes, then `owner` is released (see Note [Storage ownership]). If this throws
// ValueError (bad geometry), nothing was taken: the deleter does not run and the caller still
// owns `data`. (A std::bad_alloc once the storage exists runs the deleter, as in PyTorch.)
// The storage is resizable, unlike PyTorch's from_blob: it owns the memory, and backends use
// this as their allocator. Wrapping memory that someone else also reads (an imported array)
// calls storage().set_resizable(false) on the result.
OPD_API Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                         Device device, StorageImpl::DeleterFn deleter, void* deleter_ctx,
                         std::shared_ptr<void> owner = nullptr);
}  // namespace opd
