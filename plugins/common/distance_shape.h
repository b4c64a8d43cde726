#pragma once

// cdist and pdist: the checks and result shapes that the CPU kernels and the Meta kernels share,
// so that Meta raises what the CPU raises (PyTorch's cdist_impl and _pdist_forward, Distance.cpp).

#include <cstdint>
#include <optional>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// cdist's first checks (also _cdist_forward's): both inputs at least 2-D ("cdist only supports at
// least 2D tensors, X1 got: 1D") with the same number of columns.
void cdist_check(const Tensor& x1, const Tensor& x2);

// The geometry of _cdist_forward after cdist_impl's checks (floating dtypes, p >= 0, compute_mode
// in 0..2, x1 and x2 of one dtype, and only Float and Double computed: RuntimeError "\"cdist\" not
// implemented for 'Half'"). The batch dimensions of x1 and x2 broadcast together; `batch` is
// their product.
struct CdistGeometry {
  std::vector<int64_t> batch_sizes;   // the broadcast batch dimensions
  int64_t batch = 1;                  // their product
  int64_t r1 = 0, r2 = 0, c = 0;      // rows of x1, rows of x2, columns
  std::vector<int64_t> output_sizes;  // batch_sizes + {r1, r2}
  std::vector<int64_t> x1_sizes;      // batch_sizes + {r1, c}: x1 expanded
  std::vector<int64_t> x2_sizes;      // batch_sizes + {r2, c}
};
CdistGeometry cdist_geometry(const Tensor& x1, const Tensor& x2, double p,
                             std::optional<int64_t> compute_mode);

// _cdist_backward's checks where its kernel reads grad and cdist (no operand empty): both of
// x1's dtype (TypeError "expected scalar type Float but found Int") with one element per
// distance, batch * r1 * r2 (PyTorch reads them unchecked, past their end when smaller).
void cdist_backward_check(const Tensor& grad, const Tensor& x1, const Tensor& cdist,
                          const CdistGeometry& g);

// True where cdist computes p = 2 distances with matrix products (_euclidean_dist): compute_mode 1,
// or the default mode 0 with more than 25 rows on either side (PyTorch's rule).
bool cdist_uses_mm(double p, std::optional<int64_t> compute_mode, int64_t r1, int64_t r2);

// _pdist_forward's checks (a contiguous 2-D Float or Double self) and its result's size:
// {n * (n - 1) / 2} for n rows.
std::vector<int64_t> pdist_sizes(const Tensor& self);

// _pdist_backward's checks: self and pdist contiguous, Float or Double; where the kernel reads
// them, grad and pdist of self's dtype with one element per pair of rows.
void pdist_backward_check(const Tensor& grad, const Tensor& self, const Tensor& pdist);

}  // namespace opd::common
