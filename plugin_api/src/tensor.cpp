// Out-of-line parts of plugin_api/include/opd/{storage,tensor}.h. The destructors live here so
// that the vtables of StorageImpl, TensorImpl and VersionCounter are in libopd_core.so, which
// outlives every plugin (see Note [Storage ownership] in storage.h).

#include "opd/tensor.h"

#include <fmt/format.h>

#include <string>

namespace opd {

StorageImpl::~StorageImpl() {
  if (deleter_ != nullptr) deleter_(data_, deleter_ctx_);
  owner_.reset();  // only now may the plugin that provided deleter_ go away
}

// See Note [Resizable storage]. A storage of the base type was constructed by code built before
// plugin ABI 3.3: it has no flag, and keeps the rule of that time.
bool StorageImpl::resizable() const noexcept {
  if (const auto* flagged = dynamic_cast<const detail::FlaggedStorageImpl*>(this)) {
    return flagged->resizable_.load(std::memory_order_relaxed);
  }
  return deleter_ != nullptr || data_ == nullptr;
}

bool StorageImpl::set_resizable(bool resizable) noexcept {
  auto* flagged = dynamic_cast<detail::FlaggedStorageImpl*>(this);
  if (flagged == nullptr) return false;
  flagged->resizable_.store(resizable, std::memory_order_relaxed);
  return true;
}

detail::FlaggedStorageImpl::~FlaggedStorageImpl() = default;

VersionCounter::~VersionCounter() = default;

namespace detail {

void throw_dim_out_of_range(int64_t dim, int64_t ndim, bool wrap_scalar) {
  if (ndim <= 0 && !wrap_scalar) {
    throw IndexError(fmt::format("Dimension specified as {} but tensor has no dimensions", dim));
  }
  int64_t n = ndim <= 0 ? 1 : ndim;
  throw IndexError(fmt::format(
      "Dimension out of range (expected to be in range of [{}, {}], but got {})", -n, n - 1, dim));
}

void throw_undefined_tensor(const char* method) {
  throw Error(fmt::format("{}() called on an undefined Tensor", method));
}

void throw_dtype_mismatch(ScalarType expected, ScalarType found) {
  throw TypeError(
      fmt::format("expected scalar type {} but found {}", to_string(expected), to_string(found)));
}

}  // namespace detail

namespace {

std::string join(IntArrayRef values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

// Checks that sizes/strides/offset describe elements inside a storage of `storage_nbytes`
// bytes, with PyTorch's texts.
// `caller` starts every message.
void check_geometry(const char* caller, size_t storage_nbytes, IntArrayRef sizes,
                    IntArrayRef strides, int64_t storage_offset, ScalarType dtype) {
  OPD_CHECK_T(ValueError, sizes.size() == strides.size(),
              "{}: sizes {} has {} dimensions but strides {} has {}", caller, join(sizes),
              sizes.size(), join(strides), strides.size());
  for (int64_t s : sizes) {
    OPD_CHECK_T(ValueError, s >= 0, "{}: Trying to create tensor with negative dimension {}: {}",
                caller, s, join(sizes));
  }
  for (int64_t s : strides) {
    OPD_CHECK_T(ValueError, s >= 0, "{}: negative strides are not supported, got strides {}",
                caller, join(strides));
  }
  OPD_CHECK_T(ValueError, storage_offset >= 0, "{}: invalid storage offset {}", caller,
              storage_offset);
  // Bytes needed: (offset + 1 + sum((size - 1) * stride)) * itemsize, or 0 for an empty tensor.
  const int64_t itemsize = static_cast<int64_t>(element_size(dtype));
  int64_t extent = 0;
  bool empty = false;
  bool overflow = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) empty = true;
    int64_t span = 0;
    overflow |= __builtin_mul_overflow(sizes[d] == 0 ? 0 : sizes[d] - 1, strides[d], &span);
    overflow |= __builtin_add_overflow(extent, span, &extent);
  }
  int64_t needed = 0;
  if (!empty) {
    overflow |= __builtin_add_overflow(extent, storage_offset + 1, &needed);
    overflow |= __builtin_mul_overflow(needed, itemsize, &needed);
  }
  int64_t numel = 1;
  for (int64_t s : sizes) {
    if (empty) break;
    overflow |= __builtin_mul_overflow(numel, s, &numel);
  }
  OPD_CHECK_T(ValueError, !overflow,
              "{}: sizes {}, strides {} and storage offset {} overflow int64", caller, join(sizes),
              join(strides), storage_offset);
  OPD_CHECK_T(ValueError, static_cast<uint64_t>(needed) <= storage_nbytes,
              "{}: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a storage "
              "size of {} are out of bounds for storage of size {}",
              caller, join(sizes), join(strides), storage_offset, itemsize, needed, storage_nbytes);
}

}  // namespace

std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t z = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = z;
    z *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

TensorImpl::TensorImpl(Storage storage, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset, ScalarType dtype, Device device,
                       intrusive_ptr<VersionCounter> version_counter)
    : key_set_(key_set_for_device(device.type)),
      device_(device),
      dtype_(dtype),
      is_contiguous_(true),
      storage_offset_(storage_offset),
      numel_(0),
      storage_(std::move(storage)),
      sizes_and_strides_(sizes, strides),
      version_counter_(std::move(version_counter)) {
  OPD_INTERNAL_ASSERT(storage_.defined() && version_counter_.defined());
  refresh_numel_and_contiguity();
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides,
                                       int64_t storage_offset) {
  check_geometry("set_sizes_and_strides", storage_.nbytes(), sizes, strides, storage_offset,
                 dtype_);
  sizes_and_strides_ = detail::SizesAndStrides(sizes, strides);
  storage_offset_ = storage_offset;
  refresh_numel_and_contiguity();
}

void TensorImpl::set_storage_and_geometry(Storage storage, IntArrayRef sizes, IntArrayRef strides,
                                          int64_t storage_offset) {
  OPD_CHECK_T(ValueError, storage.defined() && storage.device() == device_,
              "set_storage_and_geometry: expected a storage on {}", device_.str());
  check_geometry("set_storage_and_geometry", storage.nbytes(), sizes, strides, storage_offset,
                 dtype_);
  storage_ = std::move(storage);
  sizes_and_strides_ = detail::SizesAndStrides(sizes, strides);
  storage_offset_ = storage_offset;
  refresh_numel_and_contiguity();
}

// PyTorch's compute_contiguous: dense row-major, where size-1 dimensions may have any stride
// and an empty tensor is contiguous.
void TensorImpl::refresh_numel_and_contiguity() noexcept {
  IntArrayRef sizes = sizes_and_strides_.sizes();
  IntArrayRef strides = sizes_and_strides_.strides();
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;  // check_geometry ruled out overflow
  numel_ = n;
  is_contiguous_ = true;
  if (n == 0) return;
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) {
      is_contiguous_ = false;
      return;
    }
    expected *= sizes[d];
  }
}

std::string Tensor::str() const {
  if (!impl_) return "Tensor(undefined)";
  return fmt::format("Tensor(sizes={}, dtype={}, device={})", join(impl_->sizes()),
                     to_string(impl_->dtype()), impl_->device().str());
}

Tensor make_tensor(Storage storage, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset,
                   ScalarType dtype, Device device) {
  OPD_CHECK_T(ValueError, storage.defined(), "make_tensor: the storage is undefined");
  OPD_CHECK_T(ValueError, dtype != ScalarType::Undefined, "make_tensor: dtype is Undefined");
  OPD_CHECK_T(ValueError, storage.device() == device,
              "make_tensor: the storage is on {} but the tensor would be on {}",
              storage.device().str(), device.str());
  check_geometry("make_tensor", storage.nbytes(), sizes, strides, storage_offset, dtype);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), sizes, strides, storage_offset,
                                           dtype, device, make_intrusive<VersionCounter>()));
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides,
                 int64_t storage_offset) {
  OPD_CHECK_T(ValueError, base.defined(), "make_view: base is an undefined Tensor");
  const TensorImpl& b = *base.unsafe_get_impl();
  check_geometry("make_view", b.storage().nbytes(), sizes, strides, storage_offset, b.dtype());
  auto view = make_intrusive<TensorImpl>(b.storage(), sizes, strides, storage_offset, b.dtype(),
                                         b.device(), b.version_counter());
  view->unsafe_set_key_set(b.key_set());
  return Tensor(std::move(view));
}

namespace {

// Bytes a tensor of this geometry reaches from its first element; what a from_blob storage
// covers (PyTorch's computeStorageNbytes). Overflow is left to check_geometry, which then fails.
size_t nbytes_for(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype) {
  if (sizes.size() != strides.size()) return 0;
  uint64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] <= 0) return 0;
    if (strides[d] < 0) return 0;
    extent += static_cast<uint64_t>(sizes[d] - 1) * static_cast<uint64_t>(strides[d]);
  }
  return extent * element_size(dtype);
}

Tensor blob_tensor(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                   Device device, StorageImpl::DeleterFn deleter, void* deleter_ctx,
                   std::shared_ptr<void> owner) {
  OPD_CHECK_T(ValueError, dtype != ScalarType::Undefined, "from_blob: dtype is Undefined");
  // Checked before the storage exists, so that a bad geometry leaves the caller owning `data`.
  const size_t nbytes = nbytes_for(sizes, strides, dtype);
  check_geometry("from_blob", nbytes, sizes, strides, 0, dtype);
  // Not resizable over memory the caller keeps (Storage::create's default): Note [Resizable
  // storage].
  Storage storage = Storage::create(data, nbytes, device, deleter, deleter_ctx, std::move(owner));
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), sizes, strides, 0, dtype, device,
                                           make_intrusive<VersionCounter>()));
}

}  // namespace

Tensor from_blob(void* data, IntArrayRef sizes, ScalarType dtype, Device device) {
  std::vector<int64_t> strides = contiguous_strides(sizes);
  return blob_tensor(data, sizes, strides, dtype, device, nullptr, nullptr, nullptr);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                 Device device) {
  return blob_tensor(data, sizes, strides, dtype, device, nullptr, nullptr, nullptr);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                 Device device, StorageImpl::DeleterFn deleter, void* deleter_ctx,
                 std::shared_ptr<void> owner) {
  return blob_tensor(data, sizes, strides, dtype, device, deleter, deleter_ctx, std::move(owner));
}

}  // namespace opd
