// Meta kernels of advanced indexing and of the shape operators that move data: the CPU kernels'
// plans and checks (common/index_shape.h), and no data. A bool mask needs nonzero, which Meta
// cannot answer (its size depends on the data): indexing a Meta tensor with a mask raises the
// missing-kernel error of aten::nonzero, as in PyTorch. Index bounds are not checked (no data).

#include "common/index_shape.h"
#include "common/output.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor index_Tensor(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  const common::IndexPlan plan = common::plan_index(self, indices);
  return common::empty_output(plan.result_shape, self.scalar_type(), self.device());
}

Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                   const Tensor& values, bool) {
  const common::IndexPlan plan = common::plan_index(self, indices);
  common::check_index_put_values(self, plan, values);
  return self;
}

Tensor flip(const Tensor& self, IntArrayRef dims) {
  common::flip_dims(self, dims);
  return common::empty_output(self.sizes(), self.scalar_type(), self.device());
}

Tensor tril(const Tensor& self, int64_t) {
  common::check_triangle_input(self, "tril");
  return common::empty_output(self.sizes(), self.scalar_type(), self.device());
}

Tensor triu(const Tensor& self, int64_t) {
  common::check_triangle_input(self, "triu");
  return common::empty_output(self.sizes(), self.scalar_type(), self.device());
}

Tensor& tril_(Tensor& self, int64_t) {
  common::check_triangle_input(self, "tril");
  return self;
}

Tensor& triu_(Tensor& self, int64_t) {
  common::check_triangle_input(self, "triu");
  return self;
}

}  // namespace opd::native
