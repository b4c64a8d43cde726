#include "autograd/loss_formulas.h"

namespace opd::autograd {

Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self,
                                            const Tensor& target,
                                            const std::optional<Tensor>& weight,
                                            int64_t reduction) {
  Tensor g = opd::mul(opd::sub(opd::log1p(opd::neg(self)), opd::log(self)), grad);
  if (weight.has_value() && weight->defined()) g = opd::mul(g, *weight);
  if (reduction == 1) g = opd::div(g, static_cast<double>(target.numel()));  // mean
  return g;
}

}  // namespace opd::autograd
