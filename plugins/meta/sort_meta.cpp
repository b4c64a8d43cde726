// Meta kernels of sort.stable, topk, cummax and cummin: the CPU kernels' checks and result shapes
// (common/sort_shape.h), and no data. cumsum and cumprod are structured: opd-gen writes theirs.

#include <tuple>

#include "common/output.h"
#include "common/sort_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

std::tuple<Tensor, Tensor> sort_stable(const Tensor& self, std::optional<bool> /*stable*/,
                                       int64_t dim, bool /*descending*/) {
  common::sort_check(self);
  maybe_wrap_dim(dim, self.dim());
  return {common::empty_output(self.sizes(), self.scalar_type(), self.device()),
          common::empty_output(self.sizes(), kLong, self.device())};
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool /*largest*/,
                                bool /*sorted*/) {
  const std::vector<int64_t> sizes = common::topk_sizes(self, k, dim);
  return {common::empty_output(sizes, self.scalar_type(), self.device()),
          common::empty_output(sizes, kLong, self.device())};
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  common::cummaxmin_check("cummax_cpu", self, dim);
  return {common::empty_output(self.sizes(), self.scalar_type(), self.device()),
          common::empty_output(self.sizes(), kLong, self.device())};
}

std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  common::cummaxmin_check("cummin_cpu", self, dim);
  return {common::empty_output(self.sizes(), self.scalar_type(), self.device()),
          common::empty_output(self.sizes(), kLong, self.device())};
}

}  // namespace opd::native
