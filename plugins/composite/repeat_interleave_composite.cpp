// repeat_interleave.self_Tensor: self's slices along dim (along the flattened self when dim is
// None) selected by the indices repeat_interleave.Tensor makes of the counts, as PyTorch 1.13
// decomposes it (CompositeImplicitAutograd: index_select's gradient). A single count, 0-dim or
// of one element, repeats every slice.

#include "opd/error.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor repeat_interleave_self_Tensor(const Tensor& self, const Tensor& repeats,
                                     std::optional<int64_t> dim,
                                     std::optional<int64_t> output_size) {
  const Tensor input = dim ? self : opd::reshape(self, {-1});
  const int64_t d = dim.value_or(0);
  Tensor counts = repeats;
  if (repeats.dim() == 0 || (repeats.dim() == 1 && repeats.size(0) == 1)) {
    counts = opd::reshape(repeats, {1}).expand({input.size(d)});
  } else {
    OPD_CHECK(repeats.dim() == 1, "repeats must be 0-dim or 1-dim tensor");
    OPD_CHECK(repeats.size(0) == input.size(d),
              "repeats must have the same size as input along dim");
  }
  return opd::index_select(input, d, opd::repeat_interleave(counts, output_size));
}

}  // namespace opd::native
