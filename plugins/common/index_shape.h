#pragma once

// Advanced indexing's plan (PyTorch's make_info / AdvancedIndex): what index.Tensor and
// index_put_ read and write, computed once for every backend, so the CPU kernels and the Meta
// kernels raise the same errors and agree on the result's shape.
//
// Note [Advanced indexing]
// `indices` has one entry per leading dimension of self (None: the whole dimension). A bool or
// uint8 mask stands for as many dimensions as it has, and is replaced by the long index tensors
// of its nonzero() (a dispatched call: Meta has no nonzero, so a mask on Meta raises there, as
// in PyTorch). The long index tensors broadcast together to one shape B. When the indexed
// dimensions are adjacent, B replaces them in place ([2, 3, 4][:, idx] -> [2, *B, 4]); when they
// are separated by a whole dimension, B goes first ([2, 3, 4][i, :, j] -> [*B, 3]), as NumPy's
// and PyTorch's rule. The plan names the result's dimensions in three groups: `before` (whole
// dimensions of self ahead of B), B, and `after` (the other whole dimensions, in order).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

struct IndexPlan {
  // Long index tensors, each broadcast (expanded) to `index_shape`, and the dimension of self
  // each one indexes.
  std::vector<Tensor> indices;
  std::vector<int64_t> indexed_dims;
  std::vector<int64_t> index_shape;  // B
  // Whole dimensions of self ahead of B in the result, and after it.
  std::vector<int64_t> before_dims;
  std::vector<int64_t> after_dims;
  // The result's shape: sizes of before_dims, B, sizes of after_dims.
  std::vector<int64_t> result_shape;
};

// Checks the indices and plans the indexing of `self`. Throws IndexError:
//   "tensors used as indices must be long, byte or bool tensors"
//   "too many indices for tensor of dimension 2 (got 3)"
//   "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [4] at
//    index 0"
//   "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"
// and RuntimeError "index is out of bounds"-free: bounds are the kernels' (check_index_bound).
IndexPlan plan_index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);

// IndexError "index 5 is out of bounds for dimension 0 with size 3" unless -size <= i < size.
void check_index_bound(int64_t i, int64_t dim, int64_t size);

// index_put_'s checks of `values` against the plan: its dtype is self's (RuntimeError "Index put
// requires the source and destination dtypes match, got Float for the destination and Double for
// the source.") and it broadcasts to the result's shape (RuntimeError "shape mismatch: value
// tensor of shape [2] cannot be broadcast to indexing result of shape [1]").
void check_index_put_values(const Tensor& self, const IndexPlan& plan, const Tensor& values);

// flip(dims)'s dimensions, wrapped: flipped[d] for each dimension of self. Throws IndexError
// for a dimension out of range and RuntimeError "dim 0 appears multiple times in the list of
// dims".
std::vector<bool> flip_dims(const Tensor& self, IntArrayRef dims);

// tril and triu need a matrix: for fewer than 2 dimensions, the IndexError of wrapping dimension
// -2, as PyTorch 1.13 ("Dimension out of range (expected to be in range of [-1, 0], but got -2)").
void check_triangle_input(const Tensor& self, std::string_view op);

// "[2, 3]"
std::string sizes_str(IntArrayRef sizes);

// The number of elements of a shape.
inline int64_t product_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Calls f(l, offset) for the elements l in [begin, end) of a tensor of `sizes`, in row-major
// order, with the element offset that `strides` give each: an odometer, no division per element.
template <class F>
void walk_strided(IntArrayRef sizes, IntArrayRef strides, int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;  // also every shape with a 0 in it, whose odometer would divide by 0
  const int64_t nd = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> at(nd, 0);
  int64_t offset = 0;
  for (int64_t d = nd - 1, rest = begin; d >= 0; --d) {
    at[d] = rest % sizes[d];
    rest /= sizes[d];
    offset += at[d] * strides[d];
  }
  for (int64_t l = begin; l < end; ++l) {
    f(l, offset);
    for (int64_t d = nd - 1; d >= 0; --d) {
      offset += strides[d];
      if (++at[d] < sizes[d]) break;
      offset -= strides[d] * sizes[d];
      at[d] = 0;
    }
  }
}

}  // namespace opd::common
