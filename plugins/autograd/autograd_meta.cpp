#include "autograd/autograd_meta.h"

#include "autograd/accumulate_grad.h"

namespace opd::autograd {

std::shared_ptr<AutogradMeta> shared_meta(const Tensor& t) {
  if (!t.defined()) return nullptr;
  return std::static_pointer_cast<AutogradMeta>(t.unsafe_get_impl()->autograd_meta());
}

AutogradMeta& materialize_meta(const Tensor& t) {
  OPD_CHECK(t.defined(), "autograd: an undefined tensor has no autograd state");
  TensorImpl* impl = t.unsafe_get_impl();
  if (!impl->autograd_meta()) {
    impl->set_autograd_meta(allocate_plugin_shared<AutogradMeta>(nullptr, this_plugin_reference()));
  }
  return *static_cast<AutogradMeta*>(impl->autograd_meta().get());
}

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMeta& m = materialize_meta(t);
  if (auto existing = m.grad_accumulator.lock()) return existing;
  // Holds the leaf through a handle on the same TensorImpl.
  auto acc = make_node<AccumulateGrad>(t);
  m.grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  const AutogradMeta* m = get_meta(t);
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (m->requires_grad) return {grad_accumulator(t), 0};
  return {};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, bool differentiable) {
  if (!t.defined()) {  // an output left out by output_mask
    fn->add_undefined_input();
    return;
  }
  const uint32_t nr = fn->add_input_metadata(t);
  if (!differentiable || !is_differentiable_type(t.scalar_type())) return;
  AutogradMeta& m = materialize_meta(t);
  m.grad_fn = fn;
  m.output_nr = nr;
}

}  // namespace opd::autograd
