#include "common/factory_shape.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "opd/error.h"

namespace opd::factory {

namespace {

// "[2, 3]", as PyTorch prints an IntArrayRef.
std::string show(IntArrayRef v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

constexpr uint64_t kStorageMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// PyTorch's acc_type on CPU, applied to arange's Scalars: checks and length in `Acc`.
// Only Long measures the length in integers; every other dtype measures it in double.
template <class Acc>
int64_t arange_length_in(const Scalar& start, const Scalar& end, const Scalar& step,
                         bool integer_length) {
  const Acc xstart = start.to<Acc>();
  const Acc xend = end.to<Acc>();
  const Acc xstep = step.to<Acc>();
  OPD_CHECK(xstep > 0 || xstep < 0, "step must be nonzero");
  OPD_CHECK(std::isfinite(static_cast<double>(xstart)) && std::isfinite(static_cast<double>(xend)),
            "unsupported range: {} -> {}", xstart, xend);
  OPD_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart),
            "upper bound and larger bound inconsistent with step sign");
  if constexpr (std::is_same_v<Acc, int64_t>) {
    if (integer_length) {
      // ceil((end - start) / step) in integers, in 128 bits so that no range can overflow.
      const __int128 sgn = (xstep > 0) - (xstep < 0);
      const __int128 n =
          (static_cast<__int128>(xend) - static_cast<__int128>(xstart) + xstep - sgn) / xstep;
      OPD_CHECK(n >= 0 && n <= std::numeric_limits<int64_t>::max(),
                "invalid size, possible overflow?");
      return static_cast<int64_t>(n);
    }
  }
  const double size_d = std::ceil((end.to<double>() - start.to<double>()) / step.to<double>());
  OPD_CHECK(size_d >= 0 && size_d < 0x1p63, "invalid size, possible overflow?");
  return static_cast<int64_t>(size_d);
}

}  // namespace

void check_size_nonnegative(IntArrayRef size) {
  for (int64_t s : size) {
    OPD_CHECK(s >= 0, "Trying to create tensor with negative dimension {}: {}", s, show(size));
  }
}

ScalarType factory_dtype(std::string_view op, std::optional<ScalarType> dtype,
                         std::optional<Layout> layout, std::optional<bool> pin_memory,
                         std::string_view backend) {
  const Layout l = layout.value_or(Layout::Strided);
  OPD_CHECK(l == Layout::Strided, "{}: only the Strided layout is supported, got {}", op,
            to_string(l));
  OPD_CHECK(!pin_memory.value_or(false),
            "{}: Only dense CPU tensors can be pinned (pin_memory=True on the {} plugin)", op,
            backend);
  const ScalarType t = dtype.value_or(ScalarType::Float32);
  OPD_CHECK_T(TypeError, t != ScalarType::Undefined, "{}: dtype Undefined is not a tensor dtype",
              op);
  return t;
}

size_t storage_nbytes_contiguous(IntArrayRef size, size_t itemsize, int64_t storage_offset) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t s : size) {
    if (s == 0) return 0;
    overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(s), &n);
  }
  overflow |= __builtin_add_overflow(n, static_cast<uint64_t>(storage_offset), &n);
  overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(itemsize), &n);
  overflow |= n > kStorageMax;
  OPD_CHECK(!overflow, "Storage size calculation overflowed with sizes={}", show(size));
  return static_cast<size_t>(n);
}

size_t storage_nbytes(IntArrayRef size, IntArrayRef stride, size_t itemsize,
                      int64_t storage_offset) {
  OPD_INTERNAL_ASSERT(size.size() == stride.size());
  // One past the offset of the last element.
  uint64_t n = static_cast<uint64_t>(storage_offset) + 1;
  bool overflow = false;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] == 0) return 0;
    uint64_t span = 0;
    overflow |= __builtin_mul_overflow(static_cast<uint64_t>(stride[d]),
                                       static_cast<uint64_t>(size[d] - 1), &span);
    overflow |= __builtin_add_overflow(n, span, &n);
  }
  overflow |= __builtin_mul_overflow(n, static_cast<uint64_t>(itemsize), &n);
  overflow |= n > kStorageMax;
  OPD_CHECK(!overflow, "Storage size calculation overflowed with sizes={} and strides={}",
            show(size), show(stride));
  return static_cast<size_t>(n);
}

void check_empty_strided(IntArrayRef size, IntArrayRef stride) {
  check_size_nonnegative(size);
  OPD_CHECK(size.size() == stride.size(),
            "dimensionality of sizes ({}) must match dimensionality of strides ({})", size.size(),
            stride.size());
  for (int64_t s : stride) {
    OPD_CHECK(s >= 0, "empty_strided: negative strides are not supported, got {}", show(stride));
  }
}

common::DimVector strides_for_memory_format(IntArrayRef size, MemoryFormat format) {
  common::DimVector st(size.size());
  switch (format) {
    case MemoryFormat::Contiguous: {
      int64_t z = 1;
      for (size_t d = size.size(); d-- > 0;) {
        st[d] = z;
        z *= std::max<int64_t>(size[d], 1);
      }
      return st;
    }
    case MemoryFormat::ChannelsLast:
      OPD_CHECK(size.size() == 4, "required rank 4 tensor to use channels_last format");
      // N, C, H, W laid out as N, H, W, C.
      st[1] = 1;
      st[3] = size[1];
      st[2] = st[3] * size[3];
      st[0] = st[2] * size[2];
      return st;
    case MemoryFormat::ChannelsLast3d:
      OPD_CHECK(size.size() == 5, "required rank 5 tensor to use channels_last_3d format");
      // N, C, D, H, W laid out as N, D, H, W, C.
      st[1] = 1;
      st[4] = size[1];
      st[3] = st[4] * size[4];
      st[2] = st[3] * size[3];
      st[0] = st[2] * size[2];
      return st;
    case MemoryFormat::Preserve:
      break;
  }
  OPD_CHECK(false, "unsupported memory format {}", to_string(format));
  return st;
}

ScalarType arange_dtype(const Scalar& start, const Scalar& end, const Scalar& step,
                        std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  const bool integral = start.is_integral(true) && end.is_integral(true) && step.is_integral(true);
  return integral ? ScalarType::Int64 : ScalarType::Float32;
}

ScalarType arange_acc_type(ScalarType dtype) {
  if (is_integral(dtype, /*include_bool=*/false)) return ScalarType::Int64;
  if (dtype == ScalarType::Float16 || dtype == ScalarType::BFloat16) return ScalarType::Float32;
  return ScalarType::Float64;
}

int64_t arange_length(const Scalar& start, const Scalar& end, const Scalar& step,
                      ScalarType dtype) {
  OPD_CHECK(is_integral(dtype, false) || is_floating_point(dtype),
            "\"arange\" not implemented for '{}'", to_string(dtype));
  const bool integer_length = dtype == ScalarType::Int64;
  switch (arange_acc_type(dtype)) {
    case ScalarType::Int64:
      return arange_length_in<int64_t>(start, end, step, integer_length);
    case ScalarType::Float32:
      return arange_length_in<float>(start, end, step, false);
    default:
      return arange_length_in<double>(start, end, step, false);
  }
}

void check_random_dtype(std::string_view op, ScalarType dtype) {
  OPD_CHECK(is_floating_point(dtype), "\"{}\" not implemented for '{}'", op, to_string(dtype));
}

Tensor write_handle(const Tensor& fresh) {
  Tensor writer = make_tensor(fresh.storage(), fresh.sizes(), fresh.strides(),
                              fresh.storage_offset(), fresh.scalar_type(), fresh.device());
  writer.unsafe_get_impl()->unsafe_set_key_set(fresh.key_set());
  return writer;
}

ResizeGeometry resize_geometry(const Tensor& self, IntArrayRef size,
                               std::optional<MemoryFormat> format) {
  check_size_nonnegative(size);
  OPD_CHECK(format != MemoryFormat::Preserve, "Unsupported memory format {}",
            to_string(MemoryFormat::Preserve));
  ResizeGeometry g;
  g.sizes = size.vec();
  g.storage_offset = self.storage_offset();
  const size_t itemsize = self.element_size();
  if (!format && self.sizes() == size) {
    // Same sizes: PyTorch keeps the strides, even non-contiguous ones.
    g.strides = self.strides().vec();
    g.nbytes = storage_nbytes(size, g.strides, itemsize, g.storage_offset);
  } else {
    const auto strides = strides_for_memory_format(size, format.value_or(MemoryFormat::Contiguous));
    g.strides.assign(strides.begin(), strides.end());
    g.nbytes = storage_nbytes_contiguous(size, itemsize, g.storage_offset);
  }
  g.needs_new_storage = g.nbytes > self.storage().nbytes();
  OPD_CHECK(!g.needs_new_storage || self.storage().resizable(),
            "Trying to resize storage that is not resizable");
  return g;
}

Tensor& resize_with(Tensor& self, IntArrayRef size, std::optional<MemoryFormat> format,
                    const std::function<Storage(size_t)>& allocate,
                    const std::function<void(void*, const void*, size_t)>& copy_bytes) {
  const ResizeGeometry g = resize_geometry(self, size, format);
  TensorImpl* impl = self.unsafe_get_impl();
  if (!g.needs_new_storage) {
    impl->set_sizes_and_strides(g.sizes, g.strides, g.storage_offset);
    return self;
  }
  const Storage& old = self.storage();
  Storage fresh = allocate(g.nbytes);
  if (old.nbytes() > 0) copy_bytes(fresh.data(), old.data(), old.nbytes());
  impl->set_storage_and_geometry(std::move(fresh), g.sizes, g.strides, g.storage_offset);
  return self;
}

}  // namespace opd::factory
