// linalg_cross's meta function (structured, opd/native/meta_functions.h): PyTorch 1.13's checks
// and the broadcast output in self's dtype. The dtype checks PyTorch's kernel makes (other of
// self's dtype: "expected scalar type Float but found Double"; "\"cross\" not implemented for
// 'Half'" for Half and Bool) are made here too, so that Meta refuses what CPU refuses.

#include <vector>

#include "common/broadcast.h"
#include "common/output.h"
#include "common/type_dispatch.h"
#include "opd/error.h"
#include "opd/native/meta_functions.h"

namespace opd {

Tensor meta::linalg_cross(const Tensor& out, const Tensor& self, const Tensor& other, int64_t dim) {
  OPD_CHECK(self.dim() == other.dim(),
            "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  OPD_CHECK(self.size(d) == 3 && other.size(d) == 3,
            "linalg.cross: inputs dimension {} must have length 3. Got {} and {}", dim,
            self.size(d), other.size(d));
  const std::vector<int64_t> sizes = common::infer_size(self.sizes(), other.sizes());
  Tensor result =
      common::structured_output("linalg_cross", out, sizes, self.scalar_type(), self.device());
  OPD_CHECK(other.scalar_type() == self.scalar_type(), "expected scalar type {} but found {}",
            self.scalar_type(), other.scalar_type());
  common::check_dtype_in("cross", self.scalar_type(),
                         common::TypeSet::All.with(kBFloat16) | common::TypeSet::Complex);
  return result;
}

}  // namespace opd
