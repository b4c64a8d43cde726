#include "autograd/accumulate_grad.h"

#include "autograd/autograd_meta.h"
#include "opd/autograd.h"

namespace opd::autograd {

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  add_input_metadata(variable_);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  if (!grads.empty() && grads[0].defined()) accumulate_into_grad(variable_, std::move(grads[0]));
  return {};
}

void accumulate_into_grad(const Tensor& t, Tensor grad) {
  AutogradMeta& m = materialize_meta(t);
  if (!m.grad.defined()) {
    // A gradient may share memory with another (add's formula returns `grad` to both inputs,
    // expand's is a broadcast view): keep a dense copy of our own, which add_ may then change.
    m.grad = grad.clone(MemoryFormat::Contiguous);
  } else if (is_grad_enabled()) {
    m.grad = m.grad + grad;  // create_graph: the sum is recorded
  } else {
    m.grad.add_(grad);
  }
}

}  // namespace opd::autograd
