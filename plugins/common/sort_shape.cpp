// The shared checks of the scans, sort and topk (sort_shape.h), and the meta functions of the
// structured cumsum.out and cumprod.out.

#include "common/sort_shape.h"

#include "common/output.h"
#include "common/type_dispatch.h"
#include "opd/error.h"
#include "opd/native/meta_functions.h"

namespace opd::common {

ScalarType scan_dtype(const Tensor& self, const Tensor& out, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  if (out.defined()) return out.scalar_type();
  const ScalarType t = self.scalar_type();
  return is_integral(t, /*include_bool=*/true) ? kLong : t;
}

void sort_check(const Tensor& self) {
  if (is_complex(self.scalar_type())) throw_not_implemented_for("sort", self.scalar_type());
}

std::vector<int64_t> topk_sizes(const Tensor& self, int64_t k, int64_t dim) {
  dim = maybe_wrap_dim(dim, self.dim());
  const ScalarType t = self.scalar_type();
  if (t == kHalf || t == kBool || is_complex(t)) throw_not_implemented_for("topk_cpu", t);
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  OPD_CHECK(k >= 0 && k <= n, "selected index k out of range");
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) sizes[dim] = k;
  return sizes;
}

int64_t cummaxmin_check(const char* op, const Tensor& self, int64_t dim) {
  dim = maybe_wrap_dim(dim, self.dim());
  const ScalarType t = self.scalar_type();
  if (t == kHalf || is_complex(t)) throw_not_implemented_for(op, t);
  return dim;
}

}  // namespace opd::common

namespace opd {

namespace {

Tensor scan_meta(std::string_view op, const Tensor& out, const Tensor& self, int64_t dim,
                 std::optional<ScalarType> dtype) {
  maybe_wrap_dim(dim, self.dim());
  const ScalarType t = common::scan_dtype(self, out, dtype);
  Tensor result = common::structured_output(op, out, self.sizes(), t, self.device());
  // A given output (self for cumsum_/cumprod_) must not overlap itself: CPU's scan refuses it
  // as PyTorch 1.13's CPU does, and Meta checks the same (PyTorch's Meta lets it through).
  if (out.defined()) common::check_no_internal_overlap(out);
  return result;
}

}  // namespace

Tensor meta::cumsum(const Tensor& out, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype) {
  return scan_meta("cumsum", out, self, dim, dtype);
}

Tensor meta::cumprod(const Tensor& out, const Tensor& self, int64_t dim,
                     std::optional<ScalarType> dtype) {
  return scan_meta("cumprod", out, self, dim, dtype);
}

}  // namespace opd
