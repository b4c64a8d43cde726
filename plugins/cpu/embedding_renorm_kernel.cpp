// embedding_renorm_: the rows of an embedding table that `indices` names are scaled, in place, so
// that their norm_type-norm is at most max_norm (F.embedding's max_norm). As PyTorch's CPU kernel:
// each distinct row once, in index order; a row whose norm exceeds max_norm is multiplied by
// max_norm / (norm + 1e-7), in its own dtype. Not differentiable (F.embedding calls it under
// no_grad).

#include <algorithm>
#include <vector>

#include "common/nn_shape.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"

namespace opd::native {

Tensor& embedding_renorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  common::embedding_renorm_check(self, indices);
  const Tensor idx = indices.to(kLong).contiguous();
  const int64_t* data = idx.data_ptr<int64_t>();
  std::vector<int64_t> rows(data, data + idx.numel());
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  for (int64_t i : rows) {
    Tensor row = self.select(0, i);  // IndexError for an index out of range, as PyTorch
    const double norm = opd::norm(row, norm_type).item().to<double>();
    if (norm > max_norm) row.mul_(max_norm / (norm + 1e-7));
  }
  return self;
}

}  // namespace opd::native
