#pragma once

// Broadcasting (PyTorch's infer_size): the shape two or more tensors expand to when an
// elementwise operator combines them.

#include <cstdint>
#include <span>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// The broadcast shape of `a` and `b`: aligned at the last dimension, each pair of sizes must be
// equal or one of them 1 (a missing leading dimension counts as 1), and the result takes the
// other size (so 1 with 0 gives 0). Throws opd::Error, numbering the dimension in the result:
//   "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
std::vector<int64_t> infer_size(IntArrayRef a, IntArrayRef b);

// The broadcast shape of all of `shapes`, folded from the left: the error for a mismatch names
// the shape broadcast so far as tensor a and the next shape as tensor b. No shapes give [].
std::vector<int64_t> infer_size(std::span<const IntArrayRef> shapes);

}  // namespace opd::common
