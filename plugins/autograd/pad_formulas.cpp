#include "autograd/pad_formulas.h"

#include <vector>

namespace opd::autograd {

Tensor constant_pad_nd_backward(const Tensor& grad, IntArrayRef pad) {
  std::vector<int64_t> negated;
  negated.reserve(pad.size());
  for (int64_t p : pad) negated.push_back(-p);
  return opd::constant_pad_nd(grad, negated, 0);
}

}  // namespace opd::autograd
