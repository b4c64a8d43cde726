// Composites of the sort and gather/scatter family, as PyTorch writes them: sort (the stable
// overload with stable=False), masked_fill (self broadcast with the mask, copied, filled in
// place) and index_fill (copied, filled in place) are CompositeExplicitAutograd, with
// derivatives of their own; argsort and take_along_dim decompose (CompositeImplicitAutograd), so
// autograd follows sort and gather.

#include <optional>
#include <tuple>
#include <vector>

#include "common/broadcast.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return opd::sort(self, std::optional<bool>(false), dim, descending);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  return std::get<1>(opd::sort(self, dim, descending));
}

Tensor argsort_stable(const Tensor& self, bool stable, int64_t dim, bool descending) {
  return std::get<1>(opd::sort(self, std::optional<bool>(stable), dim, descending));
}

namespace {

Tensor broadcast_copy(const Tensor& self, const Tensor& mask) {
  const std::vector<int64_t> sizes = common::infer_size(self.sizes(), mask.sizes());
  return opd::clone(self.expand(sizes), MemoryFormat::Contiguous);
}

}  // namespace

Tensor masked_fill_Scalar(const Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor result = broadcast_copy(self, mask);
  result.masked_fill_(mask, value);
  return result;
}

Tensor masked_fill_Tensor(const Tensor& self, const Tensor& mask, const Tensor& value) {
  Tensor result = broadcast_copy(self, mask);
  result.masked_fill_(mask, value);
  return result;
}

Tensor index_fill_int_Scalar(const Tensor& self, int64_t dim, const Tensor& index,
                             const Scalar& value) {
  Tensor result = opd::clone(self, MemoryFormat::Contiguous);
  result.index_fill_(dim, index, value);
  return result;
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  if (!dim) return opd::gather(self.view({-1}), 0, indices.view({-1}));
  OPD_CHECK(indices.scalar_type() == kLong,
            "torch.take_along_dim(): dtype of indices should be Long but got {}",
            indices.scalar_type());
  OPD_CHECK(self.dim() == indices.dim(),
            "torch.take_along_dim(): input and indices should have the same number of "
            "dimensions, but got {} dimensions for input, and {} dimensions for indices",
            self.dim(), indices.dim());
  const int64_t d = maybe_wrap_dim(*dim, self.dim());
  if (self.dim() == 0) return opd::gather(self, d, indices);
  // Every dimension but d broadcasts; along d, self keeps its size and indices theirs.
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  sizes[d] = indices.size(d);
  std::vector<int64_t> shape = common::infer_size(sizes, indices.sizes());
  const Tensor idx = indices.expand(shape);
  shape[d] = self.size(d);
  return opd::gather(self.expand(shape), d, idx);
}

}  // namespace opd::native
