#include "common/broadcast.h"

#include <algorithm>

namespace opd::common {

std::vector<int64_t> infer_size(IntArrayRef a, IntArrayRef b) {
  const size_t ndim = std::max(a.size(), b.size());
  std::vector<int64_t> result(ndim);
  // Walk from the last dimension, where both shapes are aligned.
  for (size_t back = 0; back < ndim; ++back) {
    const int64_t size_a = back < a.size() ? a[a.size() - 1 - back] : 1;
    const int64_t size_b = back < b.size() ? b[b.size() - 1 - back] : 1;
    const size_t dim = ndim - 1 - back;
    OPD_CHECK(size_a == size_b || size_a == 1 || size_b == 1,
              "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
              "dimension {}",
              size_a, size_b, dim);
    result[dim] = size_a == 1 ? size_b : size_a;
  }
  return result;
}

std::vector<int64_t> infer_size(std::span<const IntArrayRef> shapes) {
  std::vector<int64_t> result;
  for (size_t i = 0; i < shapes.size(); ++i) {
    result = i == 0 ? shapes[0].vec() : infer_size(result, shapes[i]);
  }
  return result;
}

}  // namespace opd::common
