// Shape and indexing operators PyTorch writes as CompositeExplicitAutograd (their derivatives are
// manifests/derivatives.yaml's): index_put (index_put_ into a copy), the *_scatter operators
// (self with one slice, selection or diagonal replaced by src: the functional forms of writing
// into a view), and tril / triu's out= forms.

#include <fmt/format.h>

#include "common/output.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// Writes src into `view` (a view of a copy of self) after PyTorch's size check.
void scatter_into(const Tensor& view, const Tensor& src) {
  OPD_CHECK(view.sizes() == src.sizes(),
            "expected src to have a size equal to the slice of self. src size = {}, slice size = "
            "{}",
            common::shape_str(src.sizes()), common::shape_str(view.sizes()));
  view.copy_(src);
}

}  // namespace

Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate) {
  Tensor out = opd::clone(self);
  opd::index_put_(out, indices, values, accumulate);
  return out;
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  Tensor out = opd::clone(self);
  scatter_into(opd::select(out, dim, index), src);
  return out;
}

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  Tensor out = opd::clone(self);
  scatter_into(opd::slice(out, dim, start, end, step), src);
  return out;
}

Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2) {
  Tensor out = opd::clone(self);
  scatter_into(opd::diagonal(out, offset, dim1, dim2), src);
  return out;
}

Tensor& tril_out(const Tensor& self, int64_t diagonal, Tensor& out) {
  const Tensor result = opd::tril(self, diagonal);
  common::resize_output("tril", out, result.sizes());
  out.copy_(result);
  return out;
}

Tensor& triu_out(const Tensor& self, int64_t diagonal, Tensor& out) {
  const Tensor result = opd::triu(self, diagonal);
  common::resize_output("triu", out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace opd::native
