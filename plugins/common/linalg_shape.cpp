#include "common/linalg_shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "common/device_check.h"
#include "common/view_shape.h"

namespace opd::common {

void check_matmul_dtype(const char* op, ScalarType t) {
  OPD_CHECK(t != kBool && t != ScalarType::Undefined, "\"{}\" not implemented for '{}'", op, t);
}

std::vector<int64_t> mm_sizes(const Tensor& self, const Tensor& mat2) {
  const std::array<Tensor, 2> args{self, mat2};
  check_same_device("mm", args);
  OPD_CHECK(self.dim() == 2, "self must be a matrix");
  OPD_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  OPD_CHECK(self.size(1) == mat2.size(0),
            "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", self.size(0),
            self.size(1), mat2.size(0), mat2.size(1));
  // PyTorch returns early, unchecked, when there is nothing to multiply: an empty result, or
  // zeros of self's dtype when the inner dimension is empty (mat2 may be of another dtype).
  const bool nothing_to_multiply = self.size(0) == 0 || self.size(1) == 0 || mat2.size(1) == 0;
  OPD_CHECK(nothing_to_multiply || self.scalar_type() == mat2.scalar_type(),
            "expected scalar type {} but found {}", self.scalar_type(), mat2.scalar_type());
  check_matmul_dtype("mm", self.scalar_type());
  return {self.size(0), mat2.size(1)};
}

std::vector<int64_t> bmm_sizes(const Tensor& self, const Tensor& mat2) {
  const std::array<Tensor, 2> args{self, mat2};
  check_same_device("bmm", args);
  OPD_CHECK(self.dim() == 3, "batch1 must be a 3D tensor");
  OPD_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor");
  const int64_t batch = self.size(0), k = self.size(2);
  OPD_CHECK(mat2.size(0) == batch && mat2.size(1) == k,
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: "
            "[{}, {}].",
            batch, k, mat2.size(0), mat2.size(1));
  OPD_CHECK(self.scalar_type() == mat2.scalar_type(), "expected scalar type {} but found {}",
            self.scalar_type(), mat2.scalar_type());
  check_matmul_dtype("bmm", self.scalar_type());
  return {batch, self.size(1), mat2.size(2)};
}

std::vector<int64_t> addmm_self_strides(const Tensor& self, IntArrayRef sizes) {
  return expand_geometry(geometry_of(self), sizes,
                         legacy_type_name(self.scalar_type(), self.device()))
      .strides;
}

std::vector<int64_t> addmm_sizes(const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
  const std::array<Tensor, 3> args{self, mat1, mat2};
  check_same_device("addmm", args);
  OPD_CHECK(self.scalar_type() == mat2.scalar_type(), "self and mat2 must have the same dtype");
  OPD_CHECK(mat1.scalar_type() == mat2.scalar_type(), "mat1 and mat2 must have the same dtype");
  OPD_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got {}-D tensor", mat1.dim());
  OPD_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got {}-D tensor", mat2.dim());
  OPD_CHECK(mat1.size(1) == mat2.size(0),
            "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", mat1.size(0),
            mat1.size(1), mat2.size(0), mat2.size(1));
  check_matmul_dtype("addmm", mat1.scalar_type());
  std::vector<int64_t> sizes{mat1.size(0), mat2.size(1)};
  addmm_self_strides(self, sizes);
  return sizes;
}

BlasView blas_view(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(1, cols)))
    return {true, false, rows == 1 ? std::max<int64_t>(1, cols) : s0};
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(1, rows)))
    return {true, true, cols == 1 ? std::max<int64_t>(1, rows) : s1};
  return {};
}

}  // namespace opd::common
