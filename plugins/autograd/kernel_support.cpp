#include "autograd/kernel_support.h"

#include <fmt/format.h>

#include "autograd_nodes.h"  // generated: AsStridedBackward0
#include "opd/ops.h"

namespace opd::autograd {
namespace {

// PyTorch's CopySlices: the history of a base after an in-place operator `fn` changed one of its
// views. Its gradient for the base is the incoming one with the view's part replaced by what fn
// gives for the view; fn's other inputs get fn's gradients.
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn)
      : base_sizes_(base.sizes().vec()),
        base_strides_(base.strides().vec()),
        view_sizes_(view.sizes().vec()),
        view_strides_(view.strides().vec()),
        view_offset_(view.storage_offset() - base.storage_offset()),
        fn_(std::move(fn)) {
    edge_list edges = fn_->next_edges();
    edges[0] = gradient_edge(base);
    // fn computes the view's gradient only when its first edge is valid.
    fn_->mutable_next_edges()[0] = edges[0];
    set_next_edges(std::move(edges));
  }

  variable_list apply(variable_list&& grads) override {
    const Tensor& grad = grads[0];
    Tensor result = empty_strided(base_sizes_, base_strides_,
                                  TensorOptions().dtype(grad.scalar_type()).device(grad.device()));
    result.copy_(grad);
    Tensor slice =
        result.as_strided(view_sizes_, view_strides_, result.storage_offset() + view_offset_);
    variable_list res = run_node(fn_, {slice.clone(MemoryFormat::Contiguous)});
    variable_list out(next_edges().size());
    if (res[0].defined()) {
      slice.copy_(res[0]);
    } else {
      slice.zero_();
    }
    out[0] = result;
    for (size_t i = 1; i < res.size() && i < out.size(); ++i) out[i] = res[i];
    return out;
  }
  std::string name() const override { return "CopySlices"; }
  void release_variables() override { fn_->release_variables(); }

 private:
  std::vector<int64_t> base_sizes_, base_strides_, view_sizes_, view_strides_;
  int64_t view_offset_;
  std::shared_ptr<Node> fn_;
};

}  // namespace

std::vector<std::vector<int64_t>> args_sizes(TensorList ts) {
  std::vector<std::vector<int64_t>> out;
  for (const Tensor& t : ts) out.push_back(t.sizes().vec());
  return out;
}

Tensor clone_for_saving(const Tensor& self) {
  // Through the dispatcher with autograd on: the copy records CloneBackward0 when self needs a
  // gradient, so a graph built with create_graph also differentiates through the saved value.
  return self.clone();
}

void check_inplace(const Tensor& self, bool requires_grad) {
  if (!requires_grad) return;
  const AutogradMeta* m = get_meta(self);
  if (!m) return;
  OPD_CHECK(m->grad_fn || !m->requires_grad,
            "a leaf Variable that requires grad is being used in an in-place operation.");
  if (m->base.defined()) {
    const AutogradMeta* b = get_meta(m->base);
    OPD_CHECK(!b || b->grad_fn || !b->requires_grad,
              "a view of a leaf Variable that requires grad is being used in an in-place "
              "operation.");
  }
}

void mark_view(const Tensor& view, const Tensor& base) {
  const AutogradMeta* b = get_meta(base);
  AutogradMeta& m = materialize_meta(view);
  m.base = b && b->base.defined() ? b->base : base;
  m.attr_version = version_of(view);
}

namespace {
// Makes the view's grad_fn an AsStridedBackward0 into its base's current history.
void set_history_from_base(const Tensor& view, AutogradMeta& m) {
  const Tensor& base = m.base;
  auto view_fn = make_node<generated::AsStridedBackward0>();
  view_fn->set_next_edges({gradient_edge(base)});
  view_fn->self_sizes = base.sizes().vec();
  view_fn->self_strides = base.strides().vec();
  view_fn->self_storage_offset = base.storage_offset();
  view_fn->size_ = view.sizes().vec();
  view_fn->stride_ = view.strides().vec();
  view_fn->storage_offset_ = view.storage_offset();
  m.grad_fn = view_fn;
  m.output_nr = view_fn->add_input_metadata(view);
  m.attr_version = version_of(view);
}
}  // namespace

void refresh_view_history(const Tensor& view, AutogradMeta& m) {
  m.attr_version = version_of(view);
  if (!is_differentiable_type(view.scalar_type())) return;
  if (requires_grad(m.base)) {
    set_history_from_base(view, m);
  } else {
    m.grad_fn.reset();
  }
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn) {
  AutogradMeta& m = materialize_meta(self);
  if (!m.base.defined()) {
    set_history(self, fn);
    return;
  }
  const Tensor base = m.base;
  auto copy_slices = make_node<CopySlices>(base, self, fn);
  fn->add_input_metadata(self);
  set_history(base, copy_slices);
  // The view now reads its history from the base's.
  set_history_from_base(self, m);
}

void rebase_view_history(const Tensor& self, const std::shared_ptr<Node>& fn) {
  AutogradMeta& m = materialize_meta(self);
  if (!m.base.defined()) {
    set_history(self, fn);
    return;
  }
  // No CopySlices: the base's elements did not change, and fn's gradient (of the new geometry)
  // is not one of a slice of the base at the view's old place.
  set_history_from_base(self, m);
}

void throw_not_implemented(const char* op) {
  throw NotImplementedError(fmt::format("derivative for {} is not implemented", op));
}

void throw_out_not_differentiable(const char* name) {
  throw Error(fmt::format(
      "{}(): functions with out=... arguments don't support automatic differentiation, but one "
      "of the arguments requires grad.",
      name));
}

}  // namespace opd::autograd
