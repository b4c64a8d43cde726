#include "common/view_shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/output.h"

namespace opd {

namespace {

using common::shape_str;

int64_t ndim_of(const StridedGeometry& g) { return static_cast<int64_t>(g.sizes.size()); }

}  // namespace

StridedGeometry geometry_of(const Tensor& t) {
  return {std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
          std::vector<int64_t>(t.strides().begin(), t.strides().end()), t.storage_offset()};
}

std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel) {
  std::vector<int64_t> result(shape.begin(), shape.end());
  std::optional<size_t> inferred;
  int64_t known = 1;  // product of the given sizes
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      OPD_CHECK(!inferred, "only one dimension can be inferred");
      inferred = i;
    } else {
      OPD_CHECK(shape[i] >= 0, "invalid shape dimension {}", shape[i]);
      known *= shape[i];
    }
  }
  const bool fits = numel == known || (inferred && known > 0 && numel % known == 0);
  OPD_CHECK(fits, "shape '{}' is invalid for input of size {}", shape_str(shape), numel);
  if (inferred) {
    // With no elements, any size would do; PyTorch refuses rather than pick one.
    OPD_CHECK(known != 0,
              "cannot reshape tensor of 0 elements into shape {} because the unspecified "
              "dimension size -1 can be any value and is ambiguous",
              shape_str(shape));
    result[*inferred] = numel / known;
  }
  return result;
}

// How: walking the old dimensions from the innermost, consecutive dimensions whose strides chain
// (stride[d-1] == size[d] * stride[d], size-1 dimensions being transparent) form one chunk that
// is a single arithmetic progression in memory. A view is possible exactly when the new
// dimensions can be grouped, from the innermost too, so that each group holds as many elements
// as one chunk; a group's dimensions then take strides that are multiples of the chunk's
// innermost stride.
std::optional<std::vector<int64_t>> compute_stride(IntArrayRef old_sizes, IntArrayRef old_strides,
                                                   IntArrayRef new_sizes) {
  const int64_t new_dim = static_cast<int64_t>(new_sizes.size());
  if (old_sizes.empty()) return std::vector<int64_t>(new_sizes.size(), 1);

  const int64_t numel =
      std::accumulate(old_sizes.begin(), old_sizes.end(), int64_t{1}, std::multiplies<>());
  if (numel == 0) {
    // Strides of an empty tensor are arbitrary: keep them for an identical shape (as NumPy),
    // otherwise use the contiguous ones.
    if (std::equal(old_sizes.begin(), old_sizes.end(), new_sizes.begin(), new_sizes.end())) {
      return std::vector<int64_t>(old_strides.begin(), old_strides.end());
    }
    return contiguous_strides(new_sizes);
  }

  std::vector<int64_t> new_strides(new_sizes.size());
  int64_t view_d = new_dim - 1;
  int64_t chunk_stride = old_strides.back();  // stride of the innermost element of the chunk
  int64_t chunk_numel = 1;
  int64_t view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    chunk_numel *= old_sizes[d];
    const bool chunk_ends =
        d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != chunk_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || new_sizes[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_stride;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = old_strides[d - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

StridedGeometry view_geometry(const StridedGeometry& self, IntArrayRef shape) {
  const int64_t numel =
      std::accumulate(self.sizes.begin(), self.sizes.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> sizes = infer_size(shape, numel);
  std::optional<std::vector<int64_t>> strides = compute_stride(self.sizes, self.strides, sizes);
  OPD_CHECK(strides.has_value(),
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return {std::move(sizes), std::move(*strides), self.storage_offset};
}

std::string legacy_type_name(ScalarType dtype, Device device) {
  if (device.is_cpu()) return fmt::format("torch.{}Tensor", to_string(dtype));
  return fmt::format("torch.{}.{}Tensor", device_type_name(device.type), to_string(dtype));
}

namespace {

// `type_name()` names the tensor in the first message; called only when it is thrown.
template <class TypeName>
StridedGeometry expand_impl(const StridedGeometry& self, IntArrayRef size, TypeName&& type_name) {
  const int64_t ndim = static_cast<int64_t>(size.size());
  const int64_t self_dim = ndim_of(self);
  OPD_CHECK(ndim >= self_dim,
            "expand({}{{{}}}, size={}): the number of sizes provided ({}) must be greater or equal "
            "to the number of dimensions in the tensor ({})",
            type_name(), shape_str(self.sizes), shape_str(size), ndim, self_dim);
  StridedGeometry out{std::vector<int64_t>(ndim), std::vector<int64_t>(ndim), self.storage_offset};
  // Aligned from the right: dimension i of the result is dimension i - (ndim - self_dim) of self.
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t d = i - (ndim - self_dim);
    int64_t dim_size = 1;
    int64_t dim_stride = i + 1 < ndim ? out.sizes[i + 1] * out.strides[i + 1] : 1;
    if (d >= 0) {
      dim_size = self.sizes[d];
      dim_stride = self.strides[d];
    }
    int64_t target = size[i];
    if (target == -1) {
      OPD_CHECK(d >= 0,
                "The expanded size of the tensor ({}) isn't allowed in a leading, non-existing "
                "dimension {}",
                target, i);
      target = dim_size;
    }
    OPD_CHECK(target >= 0, "Trying to create tensor with negative dimension {}: {}", target,
              shape_str(size));
    if (dim_size != target) {
      // PyTorch's message has two spaces before "Target" and "Tensor".
      OPD_CHECK(dim_size == 1,
                "The expanded size of the tensor ({}) must match the existing size ({}) at "
                "non-singleton dimension {}.  Target sizes: {}.  Tensor sizes: {}",
                target, dim_size, i, shape_str(size), shape_str(self.sizes));
      dim_size = target;
      dim_stride = 0;
    }
    out.sizes[i] = dim_size;
    out.strides[i] = dim_stride;
  }
  return out;
}

}  // namespace

StridedGeometry expand_geometry(const StridedGeometry& self, IntArrayRef size,
                                std::string_view self_type) {
  return expand_impl(self, size, [&] { return self_type; });
}

StridedGeometry expand_geometry(const StridedGeometry& self, IntArrayRef size, ScalarType dtype,
                                Device device) {
  return expand_impl(self, size, [&] { return legacy_type_name(dtype, device); });
}

StridedGeometry permute_geometry(const StridedGeometry& self, IntArrayRef dims) {
  const int64_t ndim = ndim_of(self);
  OPD_CHECK(ndim == static_cast<int64_t>(dims.size()),
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to "
            "len(dims) = {}",
            ndim, dims.size());
  StridedGeometry out{std::vector<int64_t>(ndim), std::vector<int64_t>(ndim), self.storage_offset};
  std::vector<bool> seen(ndim, false);
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t d = maybe_wrap_dim(dims[i], ndim);
    OPD_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    out.sizes[i] = self.sizes[d];
    out.strides[i] = self.strides[d];
  }
  return out;
}

StridedGeometry transpose_geometry(const StridedGeometry& self, int64_t dim0, int64_t dim1) {
  const int64_t ndim = ndim_of(self);
  dim0 = maybe_wrap_dim(dim0, ndim);
  dim1 = maybe_wrap_dim(dim1, ndim);
  StridedGeometry out = self;
  if (ndim == 0 || dim0 == dim1) return out;
  std::swap(out.sizes[dim0], out.sizes[dim1]);
  std::swap(out.strides[dim0], out.strides[dim1]);
  return out;
}

StridedGeometry t_geometry(const StridedGeometry& self) {
  const int64_t ndim = ndim_of(self);
  OPD_CHECK(ndim <= 2, "t() expects a tensor with <= 2 dimensions, but self is {}D", ndim);
  return transpose_geometry(self, 0, ndim < 2 ? 0 : 1);
}

StridedGeometry squeeze_dim_geometry(const StridedGeometry& self, int64_t dim) {
  const int64_t ndim = ndim_of(self);
  dim = maybe_wrap_dim(dim, ndim);
  StridedGeometry out = self;
  if (ndim == 0 || self.sizes[dim] != 1) return out;
  out.sizes.erase(out.sizes.begin() + dim);
  out.strides.erase(out.strides.begin() + dim);
  return out;
}

StridedGeometry unsqueeze_geometry(const StridedGeometry& self, int64_t dim) {
  const int64_t ndim = ndim_of(self);
  dim = maybe_wrap_dim(dim, ndim + 1);
  // The new dimension steps over everything inside it, so the result stays contiguous when self is.
  const int64_t stride = dim >= ndim ? 1 : self.sizes[dim] * self.strides[dim];
  StridedGeometry out = self;
  out.sizes.insert(out.sizes.begin() + dim, 1);
  out.strides.insert(out.strides.begin() + dim, stride);
  return out;
}

StridedGeometry slice_geometry(const StridedGeometry& self, int64_t dim,
                               std::optional<int64_t> start, std::optional<int64_t> end,
                               int64_t step) {
  const int64_t ndim = ndim_of(self);
  OPD_CHECK_T(IndexError, ndim != 0, "slice() cannot be applied to a 0-dim tensor.");
  dim = maybe_wrap_dim(dim, ndim);
  OPD_CHECK(step > 0, "slice step must be positive");
  const int64_t size = self.sizes[dim];
  int64_t lo = start.value_or(0);
  int64_t hi = end.value_or(size);
  if (lo < 0) lo += size;
  if (hi < 0) hi += size;
  lo = std::clamp<int64_t>(lo, 0, size);
  hi = std::clamp<int64_t>(hi, lo, size);
  StridedGeometry out = self;
  out.storage_offset += lo * self.strides[dim];
  out.sizes[dim] = (hi - lo + step - 1) / step;
  out.strides[dim] *= step;
  return out;
}

StridedGeometry select_geometry(const StridedGeometry& self, int64_t dim, int64_t index) {
  const int64_t ndim = ndim_of(self);
  OPD_CHECK_T(IndexError, ndim != 0, "select() cannot be applied to a 0-dim tensor.");
  dim = maybe_wrap_dim(dim, ndim);
  const int64_t size = self.sizes[dim];
  OPD_CHECK_T(IndexError, index >= -size && index < size,
              "select(): index {} out of range for tensor of size {} at dimension {}", index,
              shape_str(self.sizes), dim);
  if (index < 0) index += size;
  StridedGeometry out = self;
  out.storage_offset += index * self.strides[dim];
  out.sizes.erase(out.sizes.begin() + dim);
  out.strides.erase(out.strides.begin() + dim);
  return out;
}

void check_as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  OPD_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  OPD_CHECK(std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s >= 0; }),
            "as_strided: Negative strides are not supported at the moment, got strides: {}",
            shape_str(strides));
  OPD_CHECK(storage_offset >= 0, "Tensor: invalid storage offset {}", storage_offset);
}

std::vector<int64_t> flatten_shape(IntArrayRef sizes, int64_t start_dim, int64_t end_dim) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  start_dim = maybe_wrap_dim(start_dim, ndim);
  end_dim = maybe_wrap_dim(end_dim, ndim);
  OPD_CHECK(start_dim <= end_dim,
            "flatten() has invalid args: start_dim cannot come after end_dim");
  if (ndim == 0) return {1};
  // The merged size is the product, not a -1 to infer: with a zero elsewhere -1 is ambiguous.
  std::vector<int64_t> shape(sizes.begin(), sizes.begin() + start_dim);
  shape.push_back(std::accumulate(sizes.begin() + start_dim, sizes.begin() + end_dim + 1,
                                  int64_t{1}, std::multiplies<>()));
  shape.insert(shape.end(), sizes.begin() + end_dim + 1, sizes.end());
  return shape;
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  const size_t ndim = sizes.size();
  if (ndim == 1) return sizes[0] < 2 || strides[0] == 1;
  // Dimensions by increasing stride; size-0 and size-1 ones last, since their stride is free.
  std::vector<size_t> order(ndim);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (size_t d : order) {
    if (sizes[d] < 2) return true;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

bool is_contiguous_in(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format) {
  auto dense_in_order = [&](std::initializer_list<size_t> inner_to_outer) {
    int64_t expected = 1;
    for (size_t d : inner_to_outer) {
      if (sizes[d] == 1) continue;
      if (strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  };
  const int64_t numel =
      std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<>());
  switch (format) {
    case MemoryFormat::Contiguous:
    case MemoryFormat::Preserve: {
      if (numel == 0) return true;
      int64_t expected = 1;
      for (size_t i = sizes.size(); i-- > 0;) {
        if (sizes[i] == 1) continue;
        if (strides[i] != expected) return false;
        expected *= sizes[i];
      }
      return true;
    }
    case MemoryFormat::ChannelsLast:
      return sizes.size() == 4 && (numel == 0 || dense_in_order({1, 3, 2, 0}));
    case MemoryFormat::ChannelsLast3d:
      return sizes.size() == 5 && (numel == 0 || dense_in_order({1, 4, 3, 2, 0}));
  }
  return false;
}

MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides) {
  if (is_contiguous_in(sizes, strides, MemoryFormat::Contiguous)) return MemoryFormat::Contiguous;
  if (is_contiguous_in(sizes, strides, MemoryFormat::ChannelsLast)) {
    return MemoryFormat::ChannelsLast;
  }
  if (is_contiguous_in(sizes, strides, MemoryFormat::ChannelsLast3d)) {
    return MemoryFormat::ChannelsLast3d;
  }
  return MemoryFormat::Contiguous;
}

}  // namespace opd
