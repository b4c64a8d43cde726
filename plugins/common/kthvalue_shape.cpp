#include "common/kthvalue_shape.h"

#include <vector>

#include "common/output.h"
#include "common/type_dispatch.h"
#include "opd/error.h"

namespace opd::common {

namespace {

// t with a size-1 dimension inserted at dim (its stride that of a contiguous layout there).
void insert_dim(const Tensor& t, int64_t dim) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  const int64_t stride = dim < t.dim() ? t.stride(dim) * t.size(dim) : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  t.unsafe_get_impl()->set_sizes_and_strides(sizes, strides, t.storage_offset());
}

void remove_dim(const Tensor& t, int64_t dim) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  t.unsafe_get_impl()->set_sizes_and_strides(sizes, strides, t.storage_offset());
}

}  // namespace

int64_t kthvalue_prepare(const Tensor& self, int64_t k, int64_t dim, const Tensor& values,
                         const Tensor& indices, bool keepdim) {
  dim = maybe_wrap_dim(dim, self.dim());
  const int64_t slice = self.dim() == 0 ? 1 : self.size(dim);
  if (self.numel() == 0 && self.dim() > 0) {
    OPD_CHECK_T(IndexError, self.size(dim) != 0,
                "kthvalue(): Expected reduction dim {} to have non-zero size.", dim);
  }
  OPD_CHECK(k >= 1 && k <= slice, "kthvalue(): selected number k out of range for dimension {}",
            dim);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  if (!sizes.empty()) sizes[dim] = 1;
  OPD_CHECK(values.scalar_type() == self.scalar_type() && values.device() == self.device(),
            "output values must be of same type as input");
  if (!keepdim && values.dim() == self.dim() - 1) insert_dim(values, dim);
  resize_output("kthvalue", values, sizes);
  OPD_CHECK(indices.scalar_type() == kLong && indices.device() == self.device(),
            "output indices must be of scalar type Long");
  if (!keepdim && indices.dim() == self.dim() - 1) insert_dim(indices, dim);
  resize_output("kthvalue", indices, sizes);
  check_dtype_in("kthvalue_cpu", self.scalar_type(), TypeSet::All.with(kBFloat16));
  return dim;
}

void kthvalue_finish(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices,
                     bool keepdim) {
  if (keepdim || self.dim() == 0) return;
  remove_dim(values, dim);
  remove_dim(indices, dim);
}

}  // namespace opd::common
