#pragma once

// The per-tensor autograd state, kept in TensorImpl::autograd_meta() (opaque to everyone but
// this plugin), and the functions that read and attach history.

#include <memory>

#include "autograd/node.h"

namespace opd::autograd {

struct AutogradMeta {
  Tensor grad;                           // accumulated gradient of a leaf (or a retained one)
  std::shared_ptr<Node> grad_fn;         // null for a leaf
  std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad, made on first use
  bool requires_grad = false;            // a leaf that requires grad
  bool retains_grad = false;             // a non-leaf whose .grad() is filled (retain_grad())
  uint32_t output_nr = 0;                // which input of grad_fn this tensor stands for
  Tensor base;                           // for a view: the tensor it is a view of (never a view)
  uint32_t attr_version = 0;             // a view's: the version its grad_fn was made at
};

// Note [View history]
// A view's gradient flows into its base. When the base changes in place after the view was made
// (base.mul_(2), or an in-place operator on another view of it), the view's grad_fn still leads
// into the base's old history. As PyTorch does, a view remembers the (shared) version at which
// its grad_fn was set; whenever its state is read at another version, its grad_fn is remade as
// an AsStridedBackward0 into the base's current history (or dropped, when the base no longer
// needs a gradient).
struct AutogradMeta;
void refresh_view_history(const Tensor& view, AutogradMeta& m);
inline uint32_t version_of(const Tensor& t) {
  return t.unsafe_get_impl()->version_counter()->current();
}

// The tensor's state; null when it has none. A view's history is brought up to date first
// (Note [View history]).
inline AutogradMeta* get_meta(const Tensor& t) {
  if (!t.defined()) return nullptr;
  auto* m = static_cast<AutogradMeta*>(t.unsafe_get_impl()->autograd_meta().get());
  if (m && m->base.defined() && m->attr_version != version_of(t)) refresh_view_history(t, *m);
  return m;
}
// The state, made when missing.
AutogradMeta& materialize_meta(const Tensor& t);
// The shared_ptr holding the state (for weak references); null when none.
std::shared_ptr<AutogradMeta> shared_meta(const Tensor& t);

// A leaf that requires grad, or a tensor with history.
inline bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = get_meta(t);
  return m && (m->requires_grad || m->grad_fn);
}
inline bool is_leaf(const Tensor& t) {
  const AutogradMeta* m = get_meta(t);
  return !m || !m->grad_fn;
}
// Floating and complex types, as torch's isDifferentiableType: a complex tensor may require grad.
inline bool is_differentiable_type(ScalarType t) { return is_floating_point(t) || is_complex(t); }

// Where t's gradient goes: its grad_fn's input, a leaf's AccumulateGrad, or nowhere.
Edge gradient_edge(const Tensor& t);
// The leaf's AccumulateGrad, made on first use. REQUIRES: t is a leaf that requires grad.
std::shared_ptr<Node> grad_accumulator(const Tensor& t);

// Makes `t` output `fn->add_input_metadata(t)` of `fn`. With !differentiable (or a dtype that
// cannot carry gradients) only the input is added, so that input numbers match output numbers.
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, bool differentiable = true);

}  // namespace opd::autograd
