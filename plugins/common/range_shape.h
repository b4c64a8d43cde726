#pragma once

// The metadata rules of linspace, logspace, tril_indices and triu_indices, shared by the CPU and
// Meta kernels so that their results agree: the checks (PyTorch's texts, RuntimeError) and the
// number of elements. Header-only.

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "opd/error.h"
#include "opd/scalar_type.h"

namespace opd::range {

// "number of steps must be non-negative".
inline void check_steps(int64_t steps) {
  OPD_CHECK(steps >= 0, "number of steps must be non-negative");
}

// linspace's and logspace's dtypes: every type but Bool (and Half for logspace), as PyTorch's
// CPU kernels: "\"linspace_cpu\" not implemented for 'Bool'".
inline void check_range_dtype(std::string_view kernel, ScalarType dtype, bool half_too) {
  OPD_CHECK(dtype != kBool && (half_too || dtype != kHalf), "\"{}\" not implemented for '{}'",
            kernel, dtype);
}

// tril_indices' and triu_indices' checks: row and col non-negative ("row must be non-negative,
// got-1", PyTorch's text without a space), dtype Int or Long.
inline void check_trilu(std::string_view op, int64_t row, int64_t col, ScalarType dtype) {
  OPD_CHECK(row >= 0, "row must be non-negative, got{}", row);
  OPD_CHECK(col >= 0, "col must be non-negative, got{}", col);
  OPD_CHECK(dtype == kInt || dtype == kLong, "\"{}\" not implemented for '{}'", op, dtype);
}

// The number of columns of row r in the lower triangle of a row x col matrix whose diagonal is
// shifted by offset (c <= r + offset).
inline int64_t tril_row_length(int64_t r, int64_t col, int64_t offset) {
  return std::clamp<int64_t>(r + offset + 1, 0, col);
}

// Elements of the lower triangle (tril_indices' second dimension).
inline int64_t tril_size(int64_t row, int64_t col, int64_t offset) {
  int64_t n = 0;
  for (int64_t r = 0; r < row; ++r) n += tril_row_length(r, col, offset);
  return n;
}

// Elements of the upper triangle (c >= r + offset): the complement of tril at offset - 1.
inline int64_t triu_size(int64_t row, int64_t col, int64_t offset) {
  return row * col - tril_size(row, col, offset - 1);
}

}  // namespace opd::range
