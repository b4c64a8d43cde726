// index_copy's meta function (structured, opd/native/meta_functions.h): PyTorch 1.13's checks of
// index, source and the output, in its order and with its texts, and the output of self's sizes
// and dtype. The index values (in range, not negative) are the kernel's to check.

#include <string>
#include <vector>

#include "common/output.h"
#include "opd/error.h"
#include "opd/native/meta_functions.h"

namespace opd {

namespace {

// sizes without dimension `dim` (none removed from a 0-dim tensor's), space separated as
// PyTorch prints a std::vector in this message: "4 5".
std::string slice_shape(const Tensor& t, int64_t dim) {
  std::vector<int64_t> s(t.sizes().begin(), t.sizes().end());
  if (!s.empty()) s.erase(s.begin() + dim);
  std::string out;
  for (int64_t v : s) out += (out.empty() ? "" : " ") + std::to_string(v);
  return out;
}

}  // namespace

Tensor meta::index_copy(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                        const Tensor& source) {
  dim = maybe_wrap_dim(dim, self.dim());
  if (out.defined()) {
    common::check_no_internal_overlap(out);
    common::check_no_partial_overlap(out, source);
  }
  OPD_CHECK_T(IndexError, index.dim() < 2,
              "index_copy_(): Index should have dimension 1 or 0 (got {})", index.dim());
  const int64_t n = index.numel();
  OPD_CHECK_T(IndexError, source.dim() != 0 || n == 1,
              "index_copy_(): When source is scalar, index should have one element (got {})", n);
  OPD_CHECK_T(IndexError, source.dim() == 0 || self.dim() == 0 || source.dim() == self.dim(),
              "index_copy_(): When source and destination are not scalars, their dimensionality "
              "must match. Source dimensionality ({}), destination dimensionality ({})",
              source.dim(), self.dim());
  OPD_CHECK(index.scalar_type() == kLong,
            "index_copy_(): Expected a long tensor for index, but got {}", index.scalar_type());
  OPD_CHECK(self.scalar_type() == source.scalar_type(),
            "index_copy_(): self and source expected to have the same dtype, but got (self) {} "
            "and (source) {}",
            self.scalar_type(), source.scalar_type());
  const std::string dst = slice_shape(self, dim);
  const std::string src = slice_shape(source, source.dim() == 0 ? 0 : dim);
  OPD_CHECK(dst == src,
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            "slice shape: {} at dimension {} and source slice shape: {} at dimension 0.",
            dst, dim, src);
  OPD_CHECK_T(IndexError, source.dim() == 0 || n == source.size(dim),
              "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})", n,
              source.size(dim));
  return common::structured_output("index_copy", out, self.sizes(), self.scalar_type(),
                                   self.device());
}

}  // namespace opd
