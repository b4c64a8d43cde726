// Meta kernels of index_select (and its out=), index_fill_ and masked_fill_: the CPU kernels'
// checks and result shapes (common/scatter_gather_shape.h), and no data. gather, scatter*,
// index_add are structured: opd-gen writes theirs.

#include <vector>

#include "common/output.h"
#include "common/scatter_gather_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return common::empty_output(common::index_select_sizes(self, dim, index), self.scalar_type(),
                              self.device());
}

Tensor& index_select_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  const std::vector<int64_t> sizes = common::index_select_sizes(self, dim, index);
  OPD_CHECK(self.scalar_type() == out.scalar_type(),
            "index_select(): self and result must have the same scalar type");
  common::check_no_internal_overlap(out);  // before the resize, as PyTorch's index_select_out
  common::resize_output("index_select", out, sizes);
  return out;
}

Tensor& index_fill__int_Scalar(Tensor& self, int64_t dim, const Tensor& index,
                               const Scalar& /*value*/) {
  common::index_fill_check(index);
  maybe_wrap_dim(dim, self.dim());
  common::warn_on_expanded_fill("index_fill_", self);
  return self;
}

Tensor& masked_fill__Scalar(Tensor& self, const Tensor& mask, const Scalar& /*value*/) {
  common::masked_fill_check(self, mask, nullptr);
  return self;
}

Tensor& masked_fill__Tensor(Tensor& self, const Tensor& mask, const Tensor& value) {
  common::masked_fill_check(self, mask, &value);
  return self;
}

}  // namespace opd::native
