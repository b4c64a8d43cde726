#pragma once

// gather, scatter, scatter_add, scatter_reduce, index_select and index_add: the checks and
// result shapes every backend shares (PyTorch's ScatterGatherChecks.h and the index_* meta
// functions), so Meta raises what the CPU raises. The structured operators' meta functions
// (opd::meta::gather, scatter_src, ...) are defined with them, in scatter_gather_shape.cpp.
// What depends on the values of an index (an index out of range) is the kernels' to check.

#include <cstdint>
#include <string_view>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// A dimension's size as the scatter/gather kernels see it: a 0-dim tensor is one element.
inline int64_t size_or_one(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.size(dim); }

// Error "<method>(): Expected dtype int64 for index"; with `src`, "<method>(): Expected
// self.dtype to be equal to src.dtype".
void scatter_gather_dtype_check(std::string_view method, const Tensor& self, const Tensor& index,
                                const Tensor* src);

// gather: index has self's number of dimensions ("Index tensor must have the same number of
// dimensions as input tensor") and is no larger than self but along `dim` ("Size does not match at
// dimension 0 expected index [3, 1] to be smaller than self [2, 3] apart from dimension 1").
void gather_shape_check(const Tensor& self, int64_t dim, const Tensor& index);

// scatter*: as PyTorch's scatter_shape_check, with `src` when there is one. An empty index is
// accepted whatever its shape.
void scatter_shape_check(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src);

// scatter's `reduce` ("add", "multiply"): Error "reduce argument must be either add or
// multiply."; scatter_reduce's ("sum", "prod", "mean", "amax", "amin"): Error "reduce argument
// must be either sum, prod, mean, amax or amin.".
enum class ScatterReduce { kNone, kSum, kProd, kMean, kMax, kMin };
ScatterReduce scatter_reduce_of(std::string_view reduce);
ScatterReduce scatter_reduce_two_of(std::string_view reduce);

// index_select: the result's sizes (self's, with `dim` of index.numel()), after PyTorch's checks:
// IndexError "index_select(): Index is supposed to be a vector", Error "index_select(): Expected
// dtype int32 or int64 for index", and for a 0-dim self an index of at most one element.
std::vector<int64_t> index_select_sizes(const Tensor& self, int64_t dim, const Tensor& index);

// index_add: PyTorch's index_add meta checks (a vector index of int32/int64 with one entry per
// slice of source along dim, self and source of the same dtype, slices of the same shape).
void index_add_check(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);

// index_fill_: IndexError "index_fill_(): Expected dtype int64 for index." and Error "Index has
// to be a vector/scalar" (an index of more than one dimension).
void index_fill_check(const Tensor& index);

// masked_fill_: mask is Bool (or UInt8, which PyTorch 1.13 still takes) and broadcasts to self
// (Error "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]"); a Tensor
// `value` is 0-dim ("masked_fill_ only supports a 0-dimensional value tensor, but got tensor
// with 1 dimension(s)."). An expanded self is filled with warn_on_expanded_fill's warning.
void masked_fill_check(const Tensor& self, const Tensor& mask, const Tensor* value);

// PyTorch 1.13 fills an expanded self (its aliased elements all get the same value) with a
// deprecation warning instead of refusing it: "Use of <op> on expanded tensors is deprecated.
// Please clone() the tensor before performing this operation. This also applies to advanced
// indexing e.g. tensor[mask] = scalar" (op: "masked_fill_", "index_fill_").
void warn_on_expanded_fill(std::string_view op, const Tensor& self);

}  // namespace opd::common
