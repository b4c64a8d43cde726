#pragma once

#include "autograd/node.h"

namespace opd::autograd {

// The node at a leaf that requires grad: adds the gradient it receives into the leaf's .grad().
// It holds the leaf; the leaf holds it weakly (AutogradMeta::grad_accumulator).
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// Adds `grad` into meta's .grad() of `t`: the first gradient is kept (cloned unless this is its
// only reference), later ones are added, in place unless recording (create_graph).
void accumulate_into_grad(const Tensor& t, Tensor grad);

}  // namespace opd::autograd
