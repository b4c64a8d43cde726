// The shape operators PyTorch users call that decompose into views, cat and the indexing
// operators (CompositeImplicitAutograd: autograd, Meta and every backend follow from the
// operators they call). reshape and flatten are a view when self's strides allow one, a
// contiguous copy otherwise. split, chunk, unbind and tensor_split return views of self (narrow,
// select and slice); stack and the h/v/dstack family concatenate; roll is torch's roll_common
// (two narrows concatenated per rolled dimension).

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "common/broadcast.h"
#include "common/view_shape.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

std::string sizes_str(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

std::vector<int64_t> wrap_dims(IntArrayRef dims, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(maybe_wrap_dim(d, ndim));
  return out;
}

void check_non_empty(TensorList tensors, const char* op) {
  OPD_CHECK(!tensors.empty(), "{} expects a non-empty TensorList", op);
}

Tensor atleast_1d(const Tensor& t) { return t.dim() == 0 ? opd::reshape(t, {1}) : t; }

Tensor atleast_2d(const Tensor& t) {
  if (t.dim() == 0) return opd::reshape(t, {1, 1});
  return t.dim() == 1 ? opd::unsqueeze(t, 0) : t;
}

Tensor atleast_3d(const Tensor& t) {
  if (t.dim() == 0) return opd::reshape(t, {1, 1, 1});
  if (t.dim() == 1) return opd::unsqueeze(opd::unsqueeze(t, 0), -1);
  return t.dim() == 2 ? opd::unsqueeze(t, -1) : t;
}

std::vector<Tensor> each(TensorList tensors, Tensor (*f)(const Tensor&)) {
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(f(t));
  return out;
}

}  // namespace

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  const std::vector<int64_t> sizes = infer_size(shape, self.numel());
  if (compute_stride(self.sizes(), self.strides(), sizes)) return self.view(sizes);
  return opd::clone(self, MemoryFormat::Contiguous).view(sizes);
}

Tensor flatten_using_ints(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  const std::vector<int64_t> shape = flatten_shape(self.sizes(), start_dim, end_dim);
  // Merging one dimension changes nothing: self itself, as PyTorch returns it.
  if (self.dim() != 0 && static_cast<int64_t>(shape.size()) == self.dim()) return self;
  return opd::reshape(self, shape);
}

Tensor unflatten_int(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  OPD_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  std::vector<int64_t> inferred(sizes.begin(), sizes.end());
  if (std::find(sizes.begin(), sizes.end(), -1) != sizes.end()) {
    try {
      inferred = infer_size(sizes, self.size(d));
    } catch (const Error& e) {
      throw Error(fmt::format("unflatten got an unexpected error:\n{}", e.msg()));
    }
  } else {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    OPD_CHECK(n == self.size(d),
              "unflatten: Provided sizes {} don't multiply up to the size of dim {} ({}) in the "
              "input tensor",
              sizes_str(sizes), dim, self.size(d));
  }
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + d);
  shape.insert(shape.end(), inferred.begin(), inferred.end());
  shape.insert(shape.end(), self.sizes().begin() + d + 1, self.sizes().end());
  return self.view(shape);
}

Tensor stack(TensorList tensors, int64_t dim) {
  check_non_empty(tensors, "stack");
  for (size_t i = 1; i < tensors.size(); ++i) {
    OPD_CHECK(tensors[i].sizes() == tensors[0].sizes(),
              "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry "
              "{}",
              sizes_str(tensors[0].sizes()), sizes_str(tensors[i].sizes()), i);
  }
  const int64_t d = maybe_wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(opd::unsqueeze(t, d));
  return opd::cat(parts, d);
}

Tensor hstack(TensorList tensors) {
  check_non_empty(tensors, "hstack");
  const std::vector<Tensor> parts = each(tensors, atleast_1d);
  return opd::cat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(TensorList tensors) {
  check_non_empty(tensors, "vstack");
  return opd::cat(each(tensors, atleast_2d), 0);
}

Tensor dstack(TensorList tensors) {
  check_non_empty(tensors, "dstack");
  return opd::cat(each(tensors, atleast_3d), 2);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  OPD_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.size(d);
  OPD_CHECK_T(IndexError, start >= -size && start <= size,
              "start out of range (expected to be in range of [{}, {}], but got {})", -size, size,
              start);
  if (start < 0) start += size;
  OPD_CHECK(length >= 0 && start <= size - length,
            "start ({}) + length ({}) exceeds dimension size ({}).", start, length, size);
  return opd::slice(self, d, start, start + length, 1);
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  OPD_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.size(d);
  int64_t sum = 0;
  for (int64_t s : split_sizes) {
    OPD_CHECK(s >= 0,
              "split_with_sizes expects split_sizes have only non-negative entries, but got "
              "split_sizes={}",
              sizes_str(split_sizes));
    sum += s;
  }
  OPD_CHECK(sum == size,
            "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at "
            "dimension {}), but got split_sizes={}",
            size, dim, sizes_str(split_sizes));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(opd::narrow(self, d, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> split_Tensor(const Tensor& self, int64_t split_size, int64_t dim) {
  OPD_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  OPD_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size={}",
            split_size);
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.size(d);
  OPD_CHECK(split_size != 0 || size == 0,
            "split_size can only be 0 if dimension size is 0, but got dimension size of {}", size);
  int64_t splits = 1;
  if (split_size != 0) splits = std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < splits; ++i) {
    const int64_t start = i * split_size;
    out.push_back(opd::narrow(self, d, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_sizes(const Tensor& self, IntArrayRef split_size, int64_t dim) {
  return opd::split_with_sizes(self, split_size, dim);
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  OPD_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  OPD_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: {}", chunks);
  const int64_t size = self.size(maybe_wrap_dim(dim, self.dim()));
  const int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0) {
    return opd::split_with_sizes(self, std::vector<int64_t>(chunks, 0), dim);
  }
  return opd::split(self, split_size, dim);
}

std::vector<Tensor> tensor_split_sections(const Tensor& self, int64_t sections, int64_t dim) {
  OPD_CHECK(self.dim() > 0,
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  OPD_CHECK(sections > 0, "number of sections must be larger than 0, got {}", sections);
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.size(d);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t length = size / sections + (i < size % sections ? 1 : 0);
    out.push_back(opd::slice(self, d, start, start + length, 1));
    start += length;
  }
  return out;
}

std::vector<Tensor> tensor_split_indices(const Tensor& self, IntArrayRef indices, int64_t dim) {
  OPD_CHECK(self.dim() > 0,
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i : indices) {
    out.push_back(opd::slice(self, d, start, i, 1));
    start = i;
  }
  out.push_back(opd::slice(self, d, start, self.size(d), 1));
  return out;
}

std::vector<Tensor> unbind_int(const Tensor& self, int64_t dim) {
  const int64_t d = maybe_wrap_dim(dim, self.dim(), /*wrap_scalar=*/false);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.size(d); ++i) out.push_back(opd::select(self, d, i));
  return out;
}

Tensor movedim_intlist(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  OPD_CHECK(source.size() == destination.size(),
            "movedim: Invalid source or destination dims: source ({} dims) should contain the "
            "same number of dims as destination ({} dims)",
            sizes_str(source), sizes_str(destination));
  const int64_t n = self.dim();
  const std::vector<int64_t> src = wrap_dims(source, n), dst = wrap_dims(destination, n);
  auto check_unique = [](const std::vector<int64_t>& dims, IntArrayRef given, const char* what) {
    std::vector<int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    OPD_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
              "movedim: repeated dim in `{}` ({})", what, sizes_str(given));
  };
  check_unique(src, source, "source");
  check_unique(dst, destination, "destination");
  if (n == 0) return opd::alias(self);
  std::vector<int64_t> order(n, -1);
  std::vector<bool> taken(n, false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[dst[i]] = src[i];
    taken[src[i]] = true;
  }
  // The other dimensions keep their order, in the places left free.
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o != -1) continue;
    while (taken[next]) ++next;
    o = next++;
  }
  return opd::permute(self, order);
}

Tensor movedim_int(const Tensor& self, int64_t source, int64_t destination) {
  return opd::movedim(self, IntArrayRef{source}, IntArrayRef{destination});
}

Tensor moveaxis_intlist(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  return opd::movedim(self, source, destination);
}

Tensor moveaxis_int(const Tensor& self, int64_t source, int64_t destination) {
  return opd::movedim(self, source, destination);
}

Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1) {
  return opd::transpose(self, axis0, axis1);
}

Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1) {
  return opd::transpose(self, dim0, dim1);
}

Tensor squeeze(const Tensor& self) {
  std::vector<int64_t> sizes;
  for (int64_t s : self.sizes()) {
    if (s != 1) sizes.push_back(s);
  }
  return self.view(sizes);
}

Tensor expand_as(const Tensor& self, const Tensor& other) { return self.expand(other.sizes()); }

Tensor view_as(const Tensor& self, const Tensor& other) { return self.view(other.sizes()); }

Tensor reshape_as(const Tensor& self, const Tensor& other) {
  return opd::reshape(self, other.sizes());
}

// self viewed as [1, s0, 1, s1, ...], expanded to [r0, s0, r1, s1, ...] and copied into
// [r0 * s0, r1 * s1, ...]. Always a new tensor, as PyTorch's: a reshape of the expanded view can
// itself be a view (all repeats 1, or repeats of size-1 dimensions as stride 0), so it is cloned
// first.
Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  const int64_t n = static_cast<int64_t>(repeats.size());
  OPD_CHECK(n >= self.dim(),
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor");
  std::vector<int64_t> padded(n - self.dim(), 1);
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  std::vector<int64_t> spread, expanded, result;
  for (int64_t i = 0; i < n; ++i) {
    OPD_CHECK(repeats[i] >= 0, "Trying to create tensor with negative dimension {}: {}",
              repeats[i] * padded[i], sizes_str(repeats));
    spread.insert(spread.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    result.push_back(repeats[i] * padded[i]);
  }
  return opd::clone(opd::reshape(self, spread).expand(expanded), MemoryFormat::Contiguous)
      .view(result);
}

// Each element repeated `repeats` times along dim (over the flattened self when dim is None):
// self unsqueezed after dim, expanded there and merged back into a new tensor (a copy even where
// the merge could view, as PyTorch's).
Tensor repeat_interleave_self_int(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                                  std::optional<int64_t> output_size) {
  OPD_CHECK(repeats >= 0, "repeats can not be negative");
  const Tensor input = dim ? self : opd::flatten(self);
  const int64_t d = dim ? maybe_wrap_dim(*dim, self.dim()) : 0;
  if (input.dim() == 0) return opd::repeat_interleave(opd::flatten(input), repeats, 0, output_size);
  OPD_CHECK(!output_size || *output_size == input.size(d) * repeats,
            "allocated size does not match required size");
  std::vector<int64_t> expanded(input.sizes().begin(), input.sizes().end());
  expanded.insert(expanded.begin() + d + 1, repeats);
  return opd::flatten(
      opd::clone(opd::unsqueeze(input, d + 1).expand(expanded), MemoryFormat::Contiguous), d,
      d + 1);
}

// A new tensor whose diagonal (offset, dim1, dim2) holds self's last dimension, zero elsewhere:
// diagonal_scatter into zeros, so autograd follows its formula.
Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t n = self.dim() + 1;
  const int64_t d1 = maybe_wrap_dim(dim1, n), d2 = maybe_wrap_dim(dim2, n);
  OPD_CHECK(d1 != d2, "diagonal dimensions cannot be identical {}, {}", dim1, dim2);
  const int64_t length = (self.dim() == 0 ? 1 : self.size(-1)) + std::abs(offset);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  if (!sizes.empty()) sizes.pop_back();
  sizes.insert(sizes.begin() + std::min(d1, d2), length);
  sizes.insert(sizes.begin() + std::max(d1, d2), length);
  const Tensor zeros = opd::zeros(sizes, TensorOptions(self.scalar_type()).device(self.device()));
  return opd::diagonal_scatter(zeros, self, offset, d1, d2);
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty() && shifts.size() == 1) {
    return opd::roll(opd::flatten(self), shifts, IntArrayRef{0}).view(self.sizes());
  }
  OPD_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: {}, dims:{}",
            shifts.size(), dims.size());
  if (dims.size() > 1) {
    const Tensor first = opd::roll(self, shifts.subspan(0, 1), dims.subspan(0, 1));
    return opd::roll(first, shifts.subspan(1), dims.subspan(1));
  }
  const int64_t d = maybe_wrap_dim(dims[0], self.dim());
  const int64_t size = self.size(d);
  if (self.numel() == 0 || size == 0) return opd::clone(self);
  int64_t start = (size - shifts[0]) % size;
  if (start < 0) start += size;
  return opd::cat({opd::narrow(self, d, start, size - start), opd::narrow(self, d, 0, start)}, d);
}

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  OPD_CHECK(dims.size() == 2, "expected total rotation dims == 2, but got dims = {}", dims.size());
  OPD_CHECK(self.dim() >= 2, "expected total dims >= 2, but got total dims = {}", self.dim());
  OPD_CHECK(dims[0] != dims[1] && std::abs(dims[0] - dims[1]) != self.dim(),
            "expected rotation dims to be different, but got dim0 = {} and dim1 = {}", dims[0],
            dims[1]);
  OPD_CHECK(dims[0] < self.dim() && dims[0] >= -self.dim(), "Rotation dim0 out of range, dim0 = {}",
            dims[0]);
  OPD_CHECK(dims[1] < self.dim() && dims[1] >= -self.dim(), "Rotation dim1 out of range, dim1 = {}",
            dims[1]);
  switch (((k % 4) + 4) % 4) {
    case 1:
      return opd::transpose(opd::flip(self, dims.subspan(1, 1)), dims[0], dims[1]);
    case 2:
      return opd::flip(self, dims);
    case 3:
      return opd::transpose(opd::flip(self, dims.subspan(0, 1)), dims[0], dims[1]);
    default:
      return opd::clone(self, MemoryFormat::Contiguous);
  }
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  OPD_CHECK(mask.scalar_type() == ScalarType::Bool, "masked_select: expected BoolTensor for mask");
  // expand_outplace(mask, self), as torch 1.13: its broadcast error names the mask first.
  std::vector<int64_t> shape = common::infer_size(mask.sizes(), self.sizes());
  if (shape.empty()) shape.push_back(1);  // the result is 1-dim for 0-dim operands too, as torch's
  return opd::index(self.expand(shape), {std::optional<Tensor>(mask.expand(shape))});
}

}  // namespace opd::native
