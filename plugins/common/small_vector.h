#pragma once

// SmallVector<T, N>: a vector with room for N elements inside itself, for the per-operand and
// per-dimension arrays of metadata work (sizes, strides, operands): an ordinary call, with a few
// operands of a few dimensions, keeps them off the heap.

#include <boost/container/small_vector.hpp>
#include <cstddef>

namespace opd::common {

template <class T, size_t N>
using SmallVector = boost::container::small_vector<T, N>;

// Room for the dimensions of an ordinary tensor.
inline constexpr size_t kInlineDims = 6;
using DimVector = SmallVector<int64_t, kInlineDims>;

}  // namespace opd::common
