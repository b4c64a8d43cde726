#pragma once

// Matrix products (mm, bmm, addmm): the checks and result shapes every backend shares. Results
// are contiguous, in the dtype of the operands (which must agree), on their device.

#include <cstdint>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// mm: [n, k] x [k, m] -> [n, m]. Throws Error "self must be a matrix", "mat2 must be a matrix",
// "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", "expected mat1 and mat2 to have the
// same dtype, but got: float != double"; Error "\"mm\" not implemented for 'Bool'"; and
// check_same_device's error.
std::vector<int64_t> mm_sizes(const Tensor& self, const Tensor& mat2);

// bmm: [b, n, k] x [b, k, m] -> [b, n, m]. Throws Error "batch1 must be a 3D tensor", "batch2
// must be a 3D tensor", "Expected size for first two dimensions of batch2 tensor to be: [2, 3]
// but got: [2, 4].", "expected scalar type Float but found Double"; Error for Bool.
std::vector<int64_t> bmm_sizes(const Tensor& self, const Tensor& mat2);

// addmm: beta * self + alpha * (mat1 @ mat2) -> [n, m]; `self` must broadcast to [n, m].
// Throws Error "self and mat2 must have the same dtype, but got Float and Double", "mat1 and
// mat2 must have the same dtype, but got Float and Double", "mat1 must be a matrix, got 1-D
// tensor", the mm shape error, and expand's "The expanded size of the tensor (3) must match the
// existing size (4) at non-singleton dimension 1.  Target sizes: [2, 3].  Tensor sizes: [4]"
// (see addmm_self_strides).
std::vector<int64_t> addmm_sizes(const Tensor& self, const Tensor& mat1, const Tensor& mat2);

// The strides that make `self` read as the [n, m] result of addmm (expand's rules, see
// opd::expand_geometry in common/view_shape.h, whose errors it throws).
std::vector<int64_t> addmm_self_strides(const Tensor& self, IntArrayRef sizes);

// Throws Error "\"mm\" not implemented for 'Bool'" unless the matrix products compute in
// `t` (every type but Bool).
void check_matmul_dtype(const char* op, ScalarType t);

// A [rows, cols] matrix with element strides (s0, s1) as a BLAS reads it, row-major (CBLAS) or,
// swapped, column-major (cuBLAS): stored as is (trans false) or stored transposed (trans true),
// with leading dimension ld >= 1. `ok` is false when neither fits (a stride-0 or doubly strided
// operand), which the kernel copies first.
struct BlasView {
  bool ok = false;
  bool trans = false;
  int64_t ld = 1;
};
BlasView blas_view(int64_t rows, int64_t cols, int64_t s0, int64_t s1);

}  // namespace opd::common
