// The autograd operators of native_functions.yaml's Autograd section (aten::_backward,
// requires_grad_, ...): the user API, reached through the dispatcher.

#include "autograd/api_kernels.h"

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "autograd/engine.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/ops.h"

namespace opd::autograd::api {
namespace {

Tensor root_gradient(const Tensor& output, const std::optional<Tensor>& gradient) {
  if (gradient && gradient->defined()) return *gradient;
  OPD_CHECK(output.numel() == 1, "grad can be implicitly created only for scalar outputs");
  return ones_like(output);
}

std::vector<Edge> input_edges(TensorList inputs) {
  std::vector<Edge> edges;
  for (const Tensor& t : inputs) {
    OPD_CHECK(requires_grad(t), "One of the differentiated Tensors does not require grad");
    edges.push_back(gradient_edge(t));
  }
  return edges;
}

}  // namespace

void backward(const Tensor& self, TensorList inputs, const std::optional<Tensor>& gradient,
              std::optional<bool> retain_graph, bool create_graph) {
  OPD_CHECK(requires_grad(self),
            "element 0 of tensors does not require grad and does not have a grad_fn");
  const bool keep_graph = retain_graph.value_or(create_graph);
  std::vector<Edge> roots = {gradient_edge(self)};
  if (inputs.empty()) {
    run_backward(roots, {root_gradient(self, gradient)}, keep_graph, create_graph, {});
    return;
  }
  // backward(inputs=...): only these tensors' .grad() receive their gradients.
  variable_list grads = run_backward(roots, {root_gradient(self, gradient)}, keep_graph,
                                     create_graph, input_edges(inputs));
  GradModeGuard grad_mode(create_graph);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (grads[i].defined()) accumulate_into_grad(inputs[i], grads[i]);
  }
}

std::vector<Tensor> grad(TensorList outputs, TensorList inputs, TensorList grad_outputs,
                         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  OPD_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(),
            "grad requires one grad_output per output ({} outputs, {} grad_outputs)",
            outputs.size(), grad_outputs.size());
  std::vector<Edge> roots;
  variable_list root_grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    OPD_CHECK(requires_grad(outputs[i]),
              "element {} of tensors does not require grad and does not have a grad_fn", i);
    roots.push_back(gradient_edge(outputs[i]));
    root_grads.push_back(root_gradient(
        outputs[i], grad_outputs.empty() ? std::nullopt : std::optional<Tensor>(grad_outputs[i])));
  }
  variable_list result =
      run_backward(roots, std::move(root_grads), retain_graph.value_or(create_graph), create_graph,
                   input_edges(inputs));
  for (const Tensor& g : result) {
    OPD_CHECK(g.defined() || allow_unused,
              "One of the differentiated Tensors appears to not have been used in the graph. "
              "Set allow_unused=True if this is the desired behavior.");
  }
  return result;
}

Tensor& requires_grad_(Tensor& self, bool requires_grad) {
  OPD_CHECK(is_leaf(self) || requires_grad,
            "you can only change requires_grad flags of leaf variables. If you want to use a "
            "computed variable in a subgraph that doesn't require differentiation use "
            "var_no_grad = var.detach().");
  OPD_CHECK(!requires_grad || is_differentiable_type(self.scalar_type()),
            "Only Tensors of floating point and complex dtype can require gradients");
  if (is_leaf(self)) materialize_meta(self).requires_grad = requires_grad;
  return self;
}

void retain_grad(Tensor& self) {
  OPD_CHECK(autograd::requires_grad(self),
            "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf(self)) return;  // leaves keep their gradient anyway
  AutogradMeta& m = materialize_meta(self);
  if (m.retains_grad) return;
  m.retains_grad = true;
  m.grad_fn->retained_grads().push_back({m.output_nr, shared_meta(self)});
}

bool retains_grad(const Tensor& self) {
  const AutogradMeta* m = get_meta(self);
  return m && m->retains_grad;
}

bool is_leaf_(const Tensor& self) { return is_leaf(self); }

int64_t output_nr(const Tensor& self) {
  const AutogradMeta* m = get_meta(self);
  return m && m->grad_fn ? m->output_nr : 0;
}

int64_t version(const Tensor& self) { return self.version(); }

Tensor detach(const Tensor& self) {
  // A tensor subclass (the Python key in its own set) detaches in its __torch_dispatch__, as
  // PyTorch's detach reaches the Python key below autograd: its result is whatever the subclass
  // makes, not a view sharing the wrapper's Python state. The call comes back here for the
  // plain tensors the subclass wraps, with the autograd keys excluded.
  const DispatchKey autograd = autograd_key_for(backend_of(self.device().type));
  if (self.key_set().has(DispatchKey::Python) && !tls_is_dispatch_key_excluded(autograd)) {
    AutoDispatchBelowAutograd below;
    return opd::detach(self);
  }
  // Same memory and version counter, no history.
  return make_view(self, self.sizes(), self.strides(), self.storage_offset());
}

Tensor grad_of(const Tensor& self) {
  const AutogradMeta* m = get_meta(self);
  return m ? m->grad : Tensor();
}

void set_grad(Tensor& self, const std::optional<Tensor>& grad) {
  if (grad && grad->defined()) {
    OPD_CHECK(grad->sizes().equals(self.sizes()), "assigned grad has data of a different size");
    materialize_meta(self).grad = *grad;
  } else if (AutogradMeta* m = get_meta(self)) {
    m->grad = Tensor();
  }
}

bool requires_grad_of(const Tensor& self) { return requires_grad(self); }

std::string grad_fn_name(const Tensor& self) {
  const AutogradMeta* m = get_meta(self);
  return m && m->grad_fn ? m->grad_fn->name() : std::string();
}

Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim,
                       int64_t index) {
  Tensor r = zeros(input_sizes,
                   TensorOptions().dtype(grad_output.scalar_type()).device(grad_output.device()));
  r.select(dim, index).copy_(grad_output);
  return r;
}

Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim,
                      int64_t start, int64_t end, int64_t step) {
  Tensor r = zeros(input_sizes,
                   TensorOptions().dtype(grad_output.scalar_type()).device(grad_output.device()));
  r.slice(dim, start, end, step).copy_(grad_output);
  return r;
}

}  // namespace opd::autograd::api
