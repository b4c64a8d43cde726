// repeat_interleave.Tensor on Meta: its length is the sum of the repeats, data Meta does not
// have, so only an output_size makes one (PyTorch 1.13's meta kernel, which checks nothing
// else).

#include "common/output.h"
#include "opd/error.h"
#include "opd/native/Meta.h"

namespace opd::native {

Tensor repeat_interleave_Tensor(const Tensor& repeats, std::optional<int64_t> output_size) {
  OPD_CHECK(output_size.has_value(), "cannot repeat_interleave a meta tensor without output_size");
  return common::empty_output({*output_size}, repeats.scalar_type(), repeats.device());
}

}  // namespace opd::native
