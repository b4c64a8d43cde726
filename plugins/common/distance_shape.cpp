// The checks and shapes of cdist and pdist (distance_shape.h); texts as PyTorch 1.13's.

#include "common/distance_shape.h"

#include "common/broadcast.h"
#include "common/type_dispatch.h"

namespace opd::common {

namespace {

// Only Float and Double have kernels: the dispatch error of PyTorch's AT_DISPATCH_FLOATING_TYPES.
void check_computed_dtype(std::string_view name, ScalarType dtype) {
  if (dtype != kFloat && dtype != kDouble) throw_not_implemented_for(name, dtype);
}

}  // namespace

void cdist_check(const Tensor& x1, const Tensor& x2) {
  OPD_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: {}D", x1.dim());
  OPD_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: {}D", x2.dim());
  OPD_CHECK(x1.size(-1) == x2.size(-1),
            "X1 and X2 must have the same number of columns. X1: {} X2: {}", x1.size(-1),
            x2.size(-1));
}

CdistGeometry cdist_geometry(const Tensor& x1, const Tensor& x2, double p,
                             std::optional<int64_t> compute_mode) {
  cdist_check(x1, x2);
  OPD_CHECK(is_floating_point(x1.scalar_type()),
            "cdist only supports floating-point dtypes, X1 got: {}", x1.scalar_type());
  OPD_CHECK(is_floating_point(x2.scalar_type()),
            "cdist only supports floating-point dtypes, X2 got: {}", x2.scalar_type());
  OPD_CHECK(p >= 0, "cdist only supports non-negative p values");
  OPD_CHECK(x1.device().type == x2.device().type,
            "X1 and X2 must have the same device type. X1: {} X2: {}", x1.device(), x2.device());
  const int64_t mode = compute_mode.value_or(0);
  OPD_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: {}", mode);
  check_computed_dtype("cdist", x1.scalar_type());
  OPD_CHECK(x1.scalar_type() == x2.scalar_type(), "expected scalar type {} but found {}",
            x1.scalar_type(), x2.scalar_type());

  CdistGeometry g;
  g.r1 = x1.size(-2);
  g.r2 = x2.size(-2);
  g.c = x1.size(-1);
  g.batch_sizes = infer_size(IntArrayRef(x1.sizes().data(), static_cast<size_t>(x1.dim() - 2)),
                             IntArrayRef(x2.sizes().data(), static_cast<size_t>(x2.dim() - 2)));
  for (int64_t s : g.batch_sizes) g.batch *= s;
  g.output_sizes = g.batch_sizes;
  g.output_sizes.insert(g.output_sizes.end(), {g.r1, g.r2});
  g.x1_sizes = g.batch_sizes;
  g.x1_sizes.insert(g.x1_sizes.end(), {g.r1, g.c});
  g.x2_sizes = g.batch_sizes;
  g.x2_sizes.insert(g.x2_sizes.end(), {g.r2, g.c});
  return g;
}

bool cdist_uses_mm(double p, std::optional<int64_t> compute_mode, int64_t r1, int64_t r2) {
  const int64_t mode = compute_mode.value_or(0);
  return p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
}

void cdist_backward_check(const Tensor& grad, const Tensor& x1, const Tensor& cdist,
                          const CdistGeometry& g) {
  for (const Tensor* t : {&cdist, &grad}) {
    OPD_CHECK_T(TypeError, t->scalar_type() == x1.scalar_type(),
                "expected scalar type {} but found {}", x1.scalar_type(), t->scalar_type());
  }
  const int64_t n = g.batch * g.r1 * g.r2;
  OPD_CHECK(
      grad.numel() == n && cdist.numel() == n,
      "_cdist_backward: expected grad and cdist of {} elements (the distances), got {} and {}", n,
      grad.numel(), cdist.numel());
}

std::vector<int64_t> pdist_sizes(const Tensor& self) {
  OPD_CHECK(self.is_contiguous(), "_pdist_forward requires contiguous input");
  OPD_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: {}D", self.dim());
  check_computed_dtype("pdist", self.scalar_type());
  const int64_t n = self.size(0);
  return {n <= 1 ? 0 : n * (n - 1) / 2};
}

void pdist_backward_check(const Tensor& grad, const Tensor& self, const Tensor& pdist) {
  OPD_CHECK(self.is_contiguous(), "_pdist_backward requires self to be contiguous");
  OPD_CHECK(pdist.is_contiguous(), "_pdist_backward requires pdist to be contiguous");
  OPD_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: {}D", self.dim());
  check_computed_dtype("pdist_backward", self.scalar_type());
  const int64_t n = self.size(0);
  if (n <= 1 || self.size(1) == 0) return;  // nothing is read: zeros
  // The kernel reads pdist and grad as self's type, one value per pair (PyTorch reads them
  // unchecked: past their end when they are smaller).
  for (const Tensor* t : {&pdist, &grad}) {
    OPD_CHECK_T(TypeError, t->scalar_type() == self.scalar_type(),
                "expected scalar type {} but found {}", self.scalar_type(), t->scalar_type());
  }
  const int64_t pairs = n * (n - 1) / 2;
  OPD_CHECK(pdist.numel() == pairs && grad.numel() == pairs,
            "_pdist_backward: expected grad and pdist of {} elements (one per pair of {} rows), "
            "got {} and {}",
            pairs, n, grad.numel(), pdist.numel());
}

}  // namespace opd::common
