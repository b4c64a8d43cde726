#include "autograd/norm_formulas.h"

namespace opd::autograd {

Tensor take_input_grad(std::tuple<Tensor, Tensor, Tensor> grads, std::vector<Tensor>& grad_inputs,
                       size_t weight_ix, size_t bias_ix) {
  grad_inputs[weight_ix] = std::move(std::get<1>(grads));
  grad_inputs[bias_ix] = std::move(std::get<2>(grads));
  return std::move(std::get<0>(grads));
}

}  // namespace opd::autograd
