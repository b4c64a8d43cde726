// Meta kernels of the reductions that are not structured (opd-gen writes the others from their
// meta functions): the CPU kernels' checks, shapes and dtypes (common/reduction.h), and no data.

#include <tuple>

#include "common/output.h"
#include "common/reduction.h"
#include "opd/native/Meta.h"
#include "opd/native/meta_functions.h"

namespace opd::native {

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return meta::sum_IntList(Tensor(), self, std::nullopt, false, dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  return meta::mean(Tensor(), self, std::nullopt, false, dtype);
}

namespace {

Tensor output(const Tensor& self, const common::ReductionMeta& m) {
  return common::empty_output(m.sizes, m.dtype, self.device());
}

// var_mean's and std_mean's mean: self's dtype (complex for a complex self, whose variance is
// real).
Tensor mean_output(const Tensor& self, const common::ReductionMeta& m) {
  return common::empty_output(m.sizes, self.scalar_type(), self.device());
}

std::tuple<Tensor, Tensor> value_and_index(const Tensor& self, const common::ReductionMeta& m) {
  return {output(self, m), common::empty_output(m.sizes, kLong, self.device())};
}

}  // namespace

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return value_and_index(self, common::max_dim_meta("max", self, dim, keepdim));
}

std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return value_and_index(self, common::max_dim_meta("min", self, dim, keepdim));
}

Tensor max(const Tensor& self) { return output(self, common::max_all_meta("max", self)); }

Tensor min(const Tensor& self) { return output(self, common::max_all_meta("min", self)); }

Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) {
  return output(self, common::prod_meta(self, std::nullopt, false, dtype));
}

Tensor nansum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
              std::optional<ScalarType> dtype) {
  return output(self, common::nansum_meta(self, dim, keepdim, dtype));
}

Tensor count_nonzero_dim_IntList(const Tensor& self, IntArrayRef dim) {
  return output(self, common::count_nonzero_meta(self, dim));
}

Tensor var_correction(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t>,
                      bool keepdim) {
  return output(self, common::var_meta("var", self, dim, keepdim));
}

Tensor std_correction(const Tensor& self, OptionalIntArrayRef dim, std::optional<int64_t>,
                      bool keepdim) {
  return output(self, common::var_meta("std", self, dim, keepdim));
}

std::tuple<Tensor, Tensor> var_mean_correction(const Tensor& self, OptionalIntArrayRef dim,
                                               std::optional<int64_t>, bool keepdim) {
  const common::ReductionMeta m = common::var_meta("var_mean", self, dim, keepdim);
  return {output(self, m), mean_output(self, m)};
}

std::tuple<Tensor, Tensor> std_mean_correction(const Tensor& self, OptionalIntArrayRef dim,
                                               std::optional<int64_t>, bool keepdim) {
  const common::ReductionMeta m = common::var_meta("std_mean", self, dim, keepdim);
  return {output(self, m), mean_output(self, m)};
}

}  // namespace opd::native
