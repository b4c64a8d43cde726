// softmax and log_softmax with an optional result dtype, over the _softmax / _log_softmax
// primitives: the input is converted first, except a CUDA Half input asked for Float, which
// the primitive computes in Float directly (half_to_float), as PyTorch does.

#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

bool half_to_float(const Tensor& self, std::optional<ScalarType> dtype) {
  return self.is_cuda() && self.scalar_type() == kHalf && dtype == kFloat;
}

Tensor converted(const Tensor& self, std::optional<ScalarType> dtype) {
  return dtype ? self.to(*dtype) : self;
}

}  // namespace

Tensor softmax_int(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  if (half_to_float(self, dtype)) return opd::_softmax(self, dim, true);
  return opd::_softmax(converted(self, dtype), dim, false);
}

Tensor log_softmax_int(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  if (half_to_float(self, dtype)) return opd::_log_softmax(self, dim, true);
  return opd::_log_softmax(converted(self, dtype), dim, false);
}

}  // namespace opd::native
