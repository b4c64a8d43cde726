#include "functionalize/view_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
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
// diagonal_scatter for diagonal, the opposite view for view, transpose, permute, squeeze and
// unsqueeze, a sum for expand). With remove="mutations" the view is replayed as the view
// operator itself; with remove="mutations_and_views" (reapply_views() false when the view is
// made) as its copy: aten::<view>_copy where the dispatcher has it, else the view followed by a
// contiguous clone, and the inverses clone their view results too, so that no value aliases
// another. reshape, flatten, narrow, split, unbind, squeeze() and the other
// CompositeImplicitAutograd views reach this layer already decomposed into these. A view this
// file has no kernel for (as_strided: no as_strided_scatter to write it back) is refused by the
// fallback (Note [Functionalize fallback]).

using Args = std::vector<IValue>;
// Writes `mutated`, a changed value of the view that `args` make of `base`, back into base.
using Inverse = Tensor (*)(const Tensor& base, const Tensor& mutated, const Args& args);

Tensor contiguous_copy(const Tensor& t) { return opd::clone(t, MemoryFormat::Contiguous); }

// The view operator `op` applied to `base` with the other arguments of `args`.
Tensor replay(const OperatorHandle& op, const Args& args, const Tensor& base) {
  Stack s(args.begin(), args.end());
  s[0] = IValue(base);
  op.call_boxed(&s);
  return std::move(s[0]).to_tensor();
}

ViewMeta make_meta(const OperatorHandle& op, Args args, Inverse inverse, bool reapply) {
  args[0] = IValue();  // the base is given at each replay
  ViewMeta m;
  std::optional<OperatorHandle> copy_op;
  if (!reapply) {
    const OperatorName& on = op.operator_name();
    copy_op = find_operator(on.name + "_copy", on.overload_name);
  }
  m.forward = [op, copy_op, args, reapply](const Tensor& base) {
    if (reapply) return replay(op, args, base);
    if (copy_op) return replay(*copy_op, args, base);
    return contiguous_copy(replay(op, args, base));
  };
  m.reverse = [args, inverse, reapply](const Tensor& base, const Tensor& mutated) {
    Tensor t = inverse(base, mutated, args);
    return reapply ? t : contiguous_copy(t);
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
  ViewMeta meta = make_meta(op, std::move(args), inverse, reapply_views());
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
  stack->push_back(IValue(make_functional(std::move(state))));
}

int64_t wrap(int64_t dim, int64_t ndim) { return maybe_wrap_dim(dim, ndim); }

Tensor view_inverse(const Tensor& base, const Tensor& mutated, const Args&) {
  return mutated.view(base.sizes());
}

Tensor alias_inverse(const Tensor&, const Tensor& mutated, const Args&) { return mutated; }

Tensor transpose_inverse(const Tensor&, const Tensor& mutated, const Args& a) {
  return opd::transpose(mutated, a[1].to_int(), a[2].to_int());
}

Tensor t_inverse(const Tensor&, const Tensor& mutated, const Args&) { return opd::t(mutated); }

Tensor permute_inverse(const Tensor& base, const Tensor& mutated, const Args& a) {
  const std::vector<int64_t>& dims = a[1].to_int_list();
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    inverse[static_cast<size_t>(wrap(dims[i], base.dim()))] = static_cast<int64_t>(i);
  }
  return opd::permute(mutated, inverse);
}

Tensor squeeze_dim_inverse(const Tensor& base, const Tensor& mutated, const Args& a) {
  if (base.dim() == 0) return mutated.view(base.sizes());
  const int64_t d = wrap(a[1].to_int(), base.dim());
  return base.size(d) == 1 ? opd::unsqueeze(mutated, d) : mutated;
}

Tensor unsqueeze_inverse(const Tensor&, const Tensor& mutated, const Args& a) {
  return opd::squeeze(mutated, wrap(a[1].to_int(), mutated.dim()));
}

// expand's inverse sums the broadcast dimensions back (PyTorch's at::sum_to).
Tensor expand_inverse(const Tensor& base, const Tensor& mutated, const Args&) {
  const int64_t leading = mutated.dim() - base.dim();
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < mutated.dim(); ++i) {
    if (i < leading || (base.size(i - leading) == 1 && mutated.size(i) != 1)) dims.push_back(i);
  }
  const Tensor summed = dims.empty() ? mutated : opd::sum(mutated, dims, /*keepdim=*/true);
  return summed.view(base.sizes());
}

Tensor select_inverse(const Tensor& base, const Tensor& mutated, const Args& a) {
  return opd::select_scatter(base, mutated, a[1].to_int(), a[2].to_int());
}

std::optional<int64_t> optional_int(const IValue& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_int();
}

Tensor slice_inverse(const Tensor& base, const Tensor& mutated, const Args& a) {
  return opd::slice_scatter(base, mutated, a[1].to_int(), optional_int(a[2]), optional_int(a[3]),
                            a[4].to_int());
}

Tensor diagonal_inverse(const Tensor& base, const Tensor& mutated, const Args& a) {
  return opd::diagonal_scatter(base, mutated, a[1].to_int(), a[2].to_int(), a[3].to_int());
}

template <Inverse inverse>
CppFunction kernel() {
  return CppFunction(
      [](const OperatorHandle& op, Stack* stack) { view_kernel<inverse>(op, stack); });
}

}  // namespace

void register_view_kernels(Library& m) {
  m.impl("view", kernel<&view_inverse>());
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
}

}  // namespace opd::functionalize
