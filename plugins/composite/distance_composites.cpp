// cdist and pdist as PyTorch 1.13's CompositeImplicitAutograd kernels (Distance.cpp), and
// _euclidean_dist, the matrix-product form of p = 2 distances that cdist picks for many rows.
//
// Note [cdist's two paths]
// cdist calls _cdist_forward (a kernel, differentiated by _cdist_backward) except for p = 2 with
// compute_mode 1, or the default mode with more than 25 rows on a side
// (common::cdist_uses_mm): there it calls _euclidean_dist, a composite of pow, sum, cat and
// matmul whose own derivative entry gives a zero gradient where a distance is 0, which sqrt's
// gradient would not. Empty inputs always take _cdist_forward, so the graph stays connected.

#include "common/distance_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  common::cdist_check(x1, x2);
  if (x1.numel() == 0 || x2.numel() == 0) return opd::_cdist_forward(x1, x2, p, compute_mode);
  if (!common::cdist_uses_mm(p, compute_mode, x1.size(-2), x2.size(-2))) {
    return opd::_cdist_forward(x1, x2, p, compute_mode);
  }
  const common::CdistGeometry g = common::cdist_geometry(x1, x2, p, compute_mode);
  if (g.batch == 1) return opd::_euclidean_dist(x1, x2);
  const Tensor a = x1.expand(g.x1_sizes).contiguous().view({g.batch, g.r1, g.c});
  const Tensor b = x2.expand(g.x2_sizes).contiguous().view({g.batch, g.r2, g.c});
  return opd::_euclidean_dist(a, b).view(g.output_sizes);
}

// ||a - b||^2 = -2 a.b + ||a||^2 + ||b||^2 as one matrix product of padded rows, clamped at 0
// (rounding can make it negative) before the square root.
Tensor _euclidean_dist(const Tensor& x1, const Tensor& x2) {
  const Tensor x1_norm = opd::sum(opd::pow(x1, 2), {-1}, true);
  const Tensor x2_norm = opd::sum(opd::pow(x2, 2), {-1}, true);
  const Tensor x1_pad = opd::ones_like(x1_norm);
  const Tensor x2_pad = opd::ones_like(x2_norm);
  const Tensor x1_ = opd::cat({opd::mul(x1, -2), x1_norm, x1_pad}, -1);
  const Tensor x2_ = opd::cat({x2, x2_pad, x2_norm}, -1);
  Tensor result = opd::matmul(x1_, opd::transpose(x2_, -1, -2));
  opd::clamp_min_(result, 0);
  opd::sqrt_(result);
  return result;
}

Tensor pdist(const Tensor& self, double p) {
  OPD_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: {}D", self.dim());
  OPD_CHECK(is_floating_point(self.scalar_type()), "pdist only supports floating-point dtypes");
  OPD_CHECK(p >= 0, "pdist only supports non-negative p values");
  return opd::_pdist_forward(self.contiguous(), p);
}

}  // namespace opd::native
