#include "common/index_shape.h"

#include <fmt/format.h>

#include <algorithm>

#include "opd/error.h"
#include "opd/ops.h"

namespace opd::common {

std::string sizes_str(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

namespace {

bool is_mask(const Tensor& t) {
  return t.scalar_type() == ScalarType::Bool || t.scalar_type() == ScalarType::UInt8;
}

// The defined indices broadcast together, with PyTorch's IndexError naming every shape.
std::vector<int64_t> broadcast_indices(const std::vector<Tensor>& defined) {
  std::vector<int64_t> shape;
  bool ok = true;
  for (const Tensor& t : defined) {
    const IntArrayRef s = t.sizes();
    const size_t n = std::max(shape.size(), s.size());
    std::vector<int64_t> out(n, 1);
    for (size_t i = 0; i < n; ++i) {
      const int64_t a = i < n - shape.size() ? 1 : shape[i - (n - shape.size())];
      const int64_t b = i < n - s.size() ? 1 : s[i - (n - s.size())];
      if (a != b && a != 1 && b != 1) ok = false;
      out[i] = a == 1 ? b : a;
    }
    shape = std::move(out);
  }
  if (!ok) {
    std::vector<std::string> shapes;
    for (const Tensor& t : defined) shapes.push_back(sizes_str(t.sizes()));
    throw IndexError(fmt::format(
        "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
        fmt::join(shapes, ", ")));
  }
  return shape;
}

}  // namespace

IndexPlan plan_index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  // Masks become the long indices of their nonzero elements, one per dimension they cover.
  std::vector<std::optional<Tensor>> expanded;
  int64_t dim = 0;
  for (const std::optional<Tensor>& index : indices) {
    if (!index || !index->defined()) {
      expanded.emplace_back(std::nullopt);
      ++dim;
      continue;
    }
    const Tensor& t = *index;
    OPD_CHECK_T(IndexError, t.scalar_type() == ScalarType::Int64 || is_mask(t),
                "tensors used as indices must be long, byte or bool tensors");
    if (!is_mask(t)) {
      expanded.emplace_back(t);
      ++dim;
      continue;
    }
    OPD_CHECK_T(IndexError, dim + t.dim() <= self.dim(),
                "too many indices for tensor of dimension {} (got {})", self.dim(), dim + t.dim());
    for (int64_t j = 0; j < t.dim(); ++j) {
      OPD_CHECK_T(IndexError, t.size(j) == self.size(dim + j),
                  "The shape of the mask {} at index {} does not match the shape of the indexed "
                  "tensor {} at index {}",
                  sizes_str(t.sizes()), j, sizes_str(self.sizes()), dim + j);
    }
    const Tensor nz = opd::nonzero(t);
    for (int64_t j = 0; j < t.dim(); ++j) expanded.emplace_back(opd::select(nz, 1, j));
    dim += t.dim();
  }
  OPD_CHECK_T(IndexError, static_cast<int64_t>(expanded.size()) <= self.dim(),
              "too many indices for tensor of dimension {} (got {})", self.dim(), expanded.size());

  IndexPlan plan;
  std::vector<Tensor> defined;
  for (const auto& e : expanded) {
    if (e) defined.push_back(*e);
  }
  plan.index_shape = broadcast_indices(defined);
  // Whether the indexed dimensions are adjacent (Note [Advanced indexing]).
  int64_t first = -1, last = -1;
  for (int64_t d = 0; d < static_cast<int64_t>(expanded.size()); ++d) {
    if (!expanded[d]) continue;
    if (first < 0) first = d;
    last = d;
  }
  bool adjacent = true;
  for (int64_t d = first; d >= 0 && d <= last; ++d) adjacent &= expanded[d].has_value();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < static_cast<int64_t>(expanded.size()) && expanded[d]) {
      plan.indexed_dims.push_back(d);
      plan.indices.push_back(expanded[d]->expand(plan.index_shape));
    } else if (adjacent && d < first) {
      plan.before_dims.push_back(d);
    } else {
      plan.after_dims.push_back(d);
    }
  }
  for (int64_t d : plan.before_dims) plan.result_shape.push_back(self.size(d));
  for (int64_t s : plan.index_shape) plan.result_shape.push_back(s);
  for (int64_t d : plan.after_dims) plan.result_shape.push_back(self.size(d));
  return plan;
}

void check_index_bound(int64_t i, int64_t dim, int64_t size) {
  OPD_CHECK_T(IndexError, i >= -size && i < size,
              "index {} is out of bounds for dimension {} with size {}", i, dim, size);
}

void check_index_put_values(const Tensor& self, const IndexPlan& plan, const Tensor& values) {
  OPD_CHECK(values.scalar_type() == self.scalar_type(),
            "Index put requires the source and destination dtypes match, got {} for the "
            "destination and {} for the source.",
            to_string(self.scalar_type()), to_string(values.scalar_type()));
  const IntArrayRef v = values.sizes();
  const auto& r = plan.result_shape;
  bool ok = v.size() <= r.size();
  for (size_t i = 0; ok && i < v.size(); ++i) {
    const int64_t s = v[v.size() - 1 - i];
    ok = s == 1 || s == r[r.size() - 1 - i];
  }
  OPD_CHECK(ok,
            "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of "
            "shape {}",
            sizes_str(v), sizes_str(r));
}

std::vector<bool> flip_dims(const Tensor& self, IntArrayRef dims) {
  std::vector<bool> flipped(self.dim(), false);
  for (int64_t d : dims) {
    const int64_t w = maybe_wrap_dim(d, self.dim());
    OPD_CHECK(self.dim() == 0 || !flipped[w], "dim {} appears multiple times in the list of dims",
              w);
    if (self.dim() > 0) flipped[w] = true;
  }
  return flipped;
}

void check_triangle_input(const Tensor& self, std::string_view) {
  if (self.dim() < 2) maybe_wrap_dim(-2, self.dim());
}

}  // namespace opd::common
