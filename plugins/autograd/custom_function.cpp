// Custom autograd functions: what Function<T>::apply (opd/autograd_function.h) asks of this
// plugin once forward has run, and the node that calls the function's backward. As PyTorch's
// _wrap_outputs and CppNode (torch/csrc/autograd/custom_function.{h,cpp}).

#include "autograd/custom_function.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/kernel_support.h"
#include "autograd/saved_variable.h"
#include "opd/autograd_function.h"
#include "opd/ops.h"
#include "opd/thread_annotations.h"
#include "opd/warning.h"

namespace opd::autograd {
namespace {

using detail::FunctionBackward;

class CustomFunctionNode final : public Node {
 public:
  CustomFunctionNode(std::shared_ptr<void> owner, std::vector<bool> is_variable_input,
                     bool materialize_grads)
      : owner_(std::move(owner)),
        backward_(static_cast<FunctionBackward*>(owner_.get())),
        is_variable_input_(std::move(is_variable_input)),
        materialize_grads_(materialize_grads) {}

  std::string name() const override { return backward_->name(); }
  // The engine passes zeros for outputs that got no gradient unless set_materialize_grads(false).
  bool materializes_grads() const override { return materialize_grads_; }
  // Called even when every gradient is missing, as PyTorch's CppNode and PyNode are.
  bool runs_without_grads() const override { return true; }
  void release_variables() override {
    MutexLock lock(mu_);
    for (SavedVariable& v : saved_) v.reset_data();
  }

  void save(const Tensor& t, bool is_output) {
    MutexLock lock(mu_);
    saved_.emplace_back(t, is_output);
  }

 protected:
  variable_list apply(variable_list&& grads) override;

 private:
  std::shared_ptr<void> owner_;  // the FunctionBackward, in the code that called apply
  FunctionBackward* backward_;
  std::vector<bool> is_variable_input_;  // per forward argument
  bool materialize_grads_;
  // The function's backward may write its context; two backward passes may run it at once.
  Mutex mu_;
  std::vector<SavedVariable> saved_ OPD_GUARDED_BY(mu_);
};

variable_list CustomFunctionNode::apply(variable_list&& grads) {
  std::vector<bool> needs_input_grad;
  for (size_t i = 0; i < next_edges().size(); ++i)
    needs_input_grad.push_back(should_compute_output(i));
  variable_list out;
  {
    MutexLock lock(mu_);
    variable_list saved;
    for (const SavedVariable& v : saved_) saved.push_back(v.unpack(shared()));
    out = backward_->backward(std::move(grads), std::move(saved), std::move(needs_input_grad));
  }
  const size_t expected = is_variable_input_.size();
  // Too many results are accepted when the extra ones are undefined, as PyTorch does.
  while (out.size() > expected && !out.back().defined()) out.pop_back();
  OPD_CHECK(out.size() == expected,
            "function {} returned an incorrect number of gradients (expected {}, got {})", name(),
            expected, out.size());
  variable_list result;
  for (size_t i = 0; i < expected; ++i) {
    if (is_variable_input_[i]) {
      result.push_back(std::move(out[i]));
      continue;
    }
    OPD_CHECK(!out[i].defined(),
              "function {} returned a gradient different than None at position {}, but the "
              "corresponding forward input was not a Variable",
              name(), i + 1);
  }
  return result;
}

// The tensors of a forward's lists, by identity. A few each: a vector searched linearly costs
// less than a hash set's allocations on every apply.
class ImplSet {
 public:
  ImplSet() = default;
  explicit ImplSet(const std::vector<Tensor>& ts) {
    for (const Tensor& t : ts) {
      if (t.defined()) insert(t.unsafe_get_impl());
    }
  }
  void insert(const TensorImpl* p) { impls_.push_back(p); }
  size_t count(const TensorImpl* p) const {
    return std::find(impls_.begin(), impls_.end(), p) != impls_.end() ? 1 : 0;
  }
  auto begin() const { return impls_.begin(); }
  auto end() const { return impls_.end(); }

 private:
  boost::container::small_vector<const TensorImpl*, 4> impls_;
};

// An alias of `t` that is a view of it (PyTorch's x.view_as(x)), for an input returned as is:
// the output gets its own history.
Tensor view_of_self(const Tensor& t) {
  Tensor v = make_view(t, t.sizes(), t.strides(), t.storage_offset());
  mark_view(v, t);
  return v;
}

// The outputs of a forward, given their history: PyTorch's _process_backward_mode_ad.
std::vector<Tensor> wrap_outputs(const std::vector<Tensor>& inputs, std::vector<Tensor> outputs,
                                 const ImplSet& dirty, const ImplSet& non_differentiable,
                                 const std::shared_ptr<CustomFunctionNode>& node) {
  const ImplSet input_impls(inputs);
  ImplSet output_impls;
  for (Tensor& out : outputs) {
    if (!out.defined()) {
      OPD_CHECK(!node, "Function::apply: forward returned an undefined tensor");
      continue;
    }
    const TensorImpl* impl = out.unsafe_get_impl();
    output_impls.insert(impl);
    const bool is_input = input_impls.count(impl) > 0;
    const bool is_modified = dirty.count(impl) > 0;
    const bool is_differentiable =
        node && non_differentiable.count(impl) == 0 && is_differentiable_type(out.scalar_type());
    if (!is_differentiable) {
      if (!requires_grad(out)) {
        if (is_input && !is_modified) out = view_of_self(out);
      } else {
        out = detach(out);  // a detached alias, the input keeps its own requires_grad
      }
      if (node) set_history(out, node, /*differentiable=*/false);
      continue;
    }
    if (is_modified) {
      OPD_CHECK(!(is_leaf(out) && requires_grad(out)),
                "a leaf Variable that requires grad has been used in an in-place operation.");
      if (!is_input) {
        warn(
            "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, "
            "there is no need to pass it to mark_dirty().");
      }
      OPD_CHECK(!(get_meta(out) && get_meta(out)->base.defined() && outputs.size() > 1),
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by the "
                "current autograd engine. You should either make sure the input is not a view "
                "(using .clone() for example) or make your Function only return one Tensor "
                "(potentially splitting it into two Functions: one doing the inplace that "
                "returns a single Tensor and a second one that does the other operations).");
      if (AutogradMeta* m = get_meta(out)) m->grad = Tensor();
      rebase_history(out, node);
    } else if (is_input) {
      out = view_of_self(out);
      set_history(out, node);
    } else {
      set_history(out, node);
    }
  }
  for (const TensorImpl* d : dirty) {
    OPD_CHECK(output_impls.count(d) > 0,
              "Some elements marked as dirty during the forward method were not returned as "
              "output. The inputs that are modified inplace must all be outputs of the Function.");
  }
  return outputs;
}

// autograd::_record_function(Capsule record) -> Tensor[]: the outputs of one apply, given
// their history (a detail::FunctionRecord, opd/autograd_function.h).
void record_function(const OperatorHandle&, Stack* stack) {
  OPD_CHECK(!stack->empty(), "autograd::_record_function: 1 argument expected");
  // The record was made for this call and nothing else holds it: its lists are moved out.
  detail::FunctionRecord& r = *static_cast<detail::FunctionRecord*>(
      stack->back().to_capsule(detail::kFunctionRecordCapsule).get());
  std::shared_ptr<void> backward = r.backward.to_capsule(detail::kFunctionBackwardCapsule);
  const std::vector<Tensor>& inputs = r.inputs;
  const std::vector<Tensor>& to_save = r.to_save;
  const std::vector<Tensor>& dirty = r.dirty;

  // PyTorch's get_and_bump_dirty: saved-tensor checks must see the forward's in-place change.
  for (const Tensor& t : dirty) {
    if (t.defined()) t.bump_version();
  }
  std::shared_ptr<CustomFunctionNode> node;
  if (r.record) {
    node = make_node<CustomFunctionNode>(std::move(backward), std::move(r.is_variable_input),
                                         r.materialize_grads);
    edge_list edges;
    for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
    node->set_next_edges(std::move(edges));
  }
  std::vector<Tensor> outputs = wrap_outputs(inputs, std::move(r.outputs), ImplSet(dirty),
                                             ImplSet(r.non_differentiable), node);
  if (node) {
    for (const Tensor& t : to_save) {
      const AutogradMeta* m = t.defined() ? get_meta(t) : nullptr;
      node->save(t, m != nullptr && m->grad_fn == node);
    }
  }
  stack->back() = IValue(std::move(outputs));
}

}  // namespace

void register_custom_function(Library& m) {
  m.def("_record_function(Capsule record) -> Tensor[]", &record_function);
}

}  // namespace opd::autograd
