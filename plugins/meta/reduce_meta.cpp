// Meta kernels of the reductions: the CPU kernels' checks, shapes and dtypes
// (common/reduction.h), and no data.

#include <tuple>

#include "common/output.h"
#include "common/reduction.h"
#include "opd/native/Meta.h"

namespace opd::native {

namespace {

Tensor result(const Tensor& self, const common::ReductionMeta& m) {
  return common::empty_output(m.sizes, m.dtype, self.device());
}

}  // namespace

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return result(self, common::sum_meta(self, std::nullopt, false, dtype));
}

Tensor sum_dim_IntList(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  return result(self, common::sum_meta(self, dim, keepdim, dtype));
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  return result(self, common::mean_meta(self, std::nullopt, false, dtype));
}

Tensor mean_dim(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                std::optional<ScalarType> dtype) {
  return result(self, common::mean_meta(self, dim, keepdim, dtype));
}

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return result(self, common::amax_meta("amax", self, dim, keepdim));
}

Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return result(self, common::amax_meta("amin", self, dim, keepdim));
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return result(self, common::argmax_meta(self, dim, keepdim));
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  const common::ReductionMeta m = common::max_dim_meta(self, dim, keepdim);
  return {result(self, m), common::empty_output(m.sizes, kLong, self.device())};
}

}  // namespace opd::native
