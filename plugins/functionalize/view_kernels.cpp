#include "functionalize/view_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "functionalize/functional_tensor.h"
#include "opd/ops.h"
#include "opd/plugin.h"
#include "opd/plugin_object.h"

namespace opd::functionalize {
namespace {

// Note [Views under functionalize]
// A view of a functional tensor is a new functional tensor that shares its base's
// FunctionalStorage and records, as PyTorch's ViewMeta, how to make it from the base (the view
// operator with the call's arguments) and how to write a changed view back into the base (the
// inverse, PyTorch's FunctionalInverses: select_scatter for select, slice_scatter for slice,
// diagonal_scatter for diagonal, as_strided_scatter for as_strided, the opposite view for view,
// view.dtype, transpose, permute, squeeze and unsqueeze, a sum for expand). With
// remove="mutations" the view is replayed as the view operator itself; with
// remove="mutations_and_views" (reapply_views() false when the view is made) as its copy:
// aten::<view>_copy where the dispatcher has it (Note [View copies]), else the view followed by
// a contiguous clone, and so are the views the inverses make, so that no value aliases another
// (but for views that require grad, which autograd needs as views of their base).
// reshape, flatten, narrow, split, unbind, squeeze() and the other CompositeImplicitAutograd views
// reach this layer already decomposed into these. as_strided, as PyTorch's, reads and writes
// positions of its base's value taken as its own memory (offset 0 for a value this layer made),
// which are the caller's only where that base is contiguous. A view this file has no kernel for
// (an operator of another namespace returning a view) is refused by the fallback (Note
// [Functionalize fallback]).

using Args = std::vector<IValue>;
// Writes `mutated`, a changed value of the view that `args` make of `base`, back into base;
// `reapply` false: with no value aliasing another.
using Inverse = Tensor (*)(const Tensor& base, const Tensor& mutated, const Args& args,
                           bool reapply);

// The view operator `name.overload` on `args` (args[0] the tensor viewed); `reapply` false: its
// copy instead, aten::<name>_copy where the dispatcher has it, else the view made contiguous.
Tensor view_op(const std::string& name, const std::string& overload, Args args, bool reapply) {
  std::optional<OperatorHandle> op;
  if (!reapply) op = find_operator(name + "_copy", overload);
  const bool copy_op = op.has_value();
  if (!op) op = find_operator_or_throw(name, overload);
  Stack s(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  op->call_boxed(&s);
  Tensor t = std::move(s[0]).to_tensor();
  return reapply || copy_op ? t : opd::clone(t, MemoryFormat::Contiguous);
}

ViewMeta make_meta(const OperatorHandle& op, Args args, Inverse inverse, bool reapply) {
  args[0] = IValue();  // the base is given at each replay
  ViewMeta m;
  const OperatorName& on = op.operator_name();
  m.forward = [name = on.name, overload = on.overload_name, args, reapply](const Tensor& base) {
    Args a = args;
    a[0] = IValue(base);
    return view_op(name, overload, std::move(a), reapply);
  };
  m.reverse = [args, inverse, reapply](const Tensor& base, const Tensor& mutated) {
    return inverse(base, mutated, args, reapply);
  };
  return m;
}

template <Inverse inverse>
void view_kernel(const OperatorHandle& op, Stack* stack) {
  const size_t n = op.num_arguments();
  const size_t begin = stack->size() - n;
  const Tensor self = (*stack)[begin].to_tensor();
  if (!is_functional(self)) {
    // A view of a tensor made outside functionalize: left alone, as in PyTorch.
    ExcludeFunctionalize below;
    op.call_boxed(stack);
    return;
  }
  Args args(stack->begin() + static_cast<ptrdiff_t>(begin), stack->end());
  stack->erase(stack->begin() + static_cast<ptrdiff_t>(begin), stack->end());
  sync(self);
  const FunctionalState& base = state_of(self);
  // A view autograd differentiates is replayed as a view whatever remove= says: autograd reads
  // its geometry relative to its base (Note [Functional tensors], replace_and_commit).
  const bool reapply =
      reapply_views() || (self.unsafe_get_impl()->autograd_meta() && self.requires_grad());
  ViewMeta meta = make_meta(op, std::move(args), inverse, reapply);
  Tensor value;
  {
    ExcludeFunctionalize below;
    value = meta.forward(base.value);
  }
  auto state = make_plugin_shared(new FunctionalState, this_plugin_reference());
  state->value = std::move(value);
  state->metas = base.metas;
  state->metas.push_back(std::move(meta));
  state->generation = base.generation;
  state->storage = base.storage;
  stack->push_back(
      IValue(make_functional(std::move(state), self.unsafe_get_impl()->version_counter())));
}

int64_t wrap(int64_t dim, int64_t ndim) { return maybe_wrap_dim(dim, ndim); }

Tensor view_inverse(const Tensor& base, const Tensor& mutated, const Args&, bool reapply) {
  return view_op("aten::view", "", {IValue(mutated), IValue(base.sizes())}, reapply);
}

Tensor view_dtype_inverse(const Tensor& base, const Tensor& mutated, const Args&, bool reapply) {
  return view_op("aten::view", "dtype", {IValue(mutated), IValue(base.scalar_type())}, reapply);
}

Tensor alias_inverse(const Tensor&, const Tensor& mutated, const Args&, bool reapply) {
  return reapply ? mutated : view_op("aten::alias", "", {IValue(mutated)}, reapply);
}

Tensor transpose_inverse(const Tensor&, const Tensor& mutated, const Args& a, bool reapply) {
  return view_op("aten::transpose", "int", {IValue(mutated), a[1], a[2]}, reapply);
}

Tensor t_inverse(const Tensor&, const Tensor& mutated, const Args&, bool reapply) {
  return view_op("aten::t", "", {IValue(mutated)}, reapply);
}

Tensor permute_inverse(const Tensor& base, const Tensor& mutated, const Args& a, bool reapply) {
  const std::vector<int64_t>& dims = a[1].to_int_list();
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    inverse[static_cast<size_t>(wrap(dims[i], base.dim()))] = static_cast<int64_t>(i);
  }
  return view_op("aten::permute", "", {IValue(mutated), IValue(std::move(inverse))}, reapply);
}

Tensor squeeze_dim_inverse(const Tensor& base, const Tensor& mutated, const Args& a, bool reapply) {
  if (base.dim() == 0) return view_inverse(base, mutated, a, reapply);
  const int64_t d = wrap(a[1].to_int(), base.dim());
  if (base.size(d) != 1) return mutated;
  return view_op("aten::unsqueeze", "", {IValue(mutated), IValue(d)}, reapply);
}

Tensor unsqueeze_inverse(const Tensor&, const Tensor& mutated, const Args& a, bool reapply) {
  const int64_t d = wrap(a[1].to_int(), mutated.dim());
  return view_op("aten::squeeze", "dim", {IValue(mutated), IValue(d)}, reapply);
}

// expand's inverse sums the broadcast dimensions back (PyTorch's at::sum_to).
Tensor expand_inverse(const Tensor& base, const Tensor& mutated, const Args& a, bool reapply) {
  const int64_t leading = mutated.dim() - base.dim();
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < mutated.dim(); ++i) {
    if (i < leading || (base.size(i - leading) == 1 && mutated.size(i) != 1)) dims.push_back(i);
  }
  const Tensor summed = dims.empty() ? mutated : opd::sum(mutated, dims, /*keepdim=*/true);
  return view_inverse(base, summed, a, reapply);
}

Tensor select_inverse(const Tensor& base, const Tensor& mutated, const Args& a, bool) {
  return opd::select_scatter(base, mutated, a[1].to_int(), a[2].to_int());
}

std::optional<int64_t> optional_int(const IValue& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

Tensor slice_inverse(const Tensor& base, const Tensor& mutated, const Args& a, bool) {
  return opd::slice_scatter(base, mutated, a[1].to_int(), optional_int(a[2]), optional_int(a[3]),
                            a[4].to_int());
}

Tensor diagonal_inverse(const Tensor& base, const Tensor& mutated, const Args& a, bool) {
  return opd::diagonal_scatter(base, mutated, a[1].to_int(), a[2].to_int(), a[3].to_int());
}

Tensor as_strided_inverse(const Tensor& base, const Tensor& mutated, const Args& a, bool) {
  return opd::as_strided_scatter(base, mutated, a[1].to_int_list(), a[2].to_int_list(),
                                 optional_int(a[3]));
}

template <Inverse inverse>
CppFunction kernel() {
  return CppFunction(
      [](const OperatorHandle& op, Stack* stack) { view_kernel<inverse>(op, stack); });
}

}  // namespace

void register_view_kernels(Library& m) {
  m.impl("view", kernel<&view_inverse>());
  m.impl("view.dtype", kernel<&view_dtype_inverse>());
  m.impl("alias", kernel<&alias_inverse>());
  // Reached under no_grad: with grad mode on, the autograd plugin's detach serves it above this
  // layer (a tensor sharing the functional tensor's state).
  m.impl("detach", kernel<&alias_inverse>());
  m.impl("transpose.int", kernel<&transpose_inverse>());
  m.impl("t", kernel<&t_inverse>());
  m.impl("permute", kernel<&permute_inverse>());
  m.impl("squeeze.dim", kernel<&squeeze_dim_inverse>());
  m.impl("unsqueeze", kernel<&unsqueeze_inverse>());
  m.impl("expand", kernel<&expand_inverse>());
  m.impl("select.int", kernel<&select_inverse>());
  m.impl("slice.Tensor", kernel<&slice_inverse>());
  m.impl("diagonal", kernel<&diagonal_inverse>());
  m.impl("as_strided", kernel<&as_strided_inverse>());
}

}  // namespace opd::functionalize
