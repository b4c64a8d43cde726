#include "functionalize/fallback.h"

#include <fmt/format.h>

#include <vector>

#include "functionalize/functional_tensor.h"
#include "functionalize/functional_variant.h"

namespace opd::functionalize {
namespace {

// Note [Functionalize fallback]
// Every operator without a Functionalize kernel of its own (the views have theirs,
// view_kernels.cpp) comes here, as to PyTorch's functionalizeFallback plus the kernels its
// codegen writes for mutating operators:
//   - the functional tensors among the arguments are synced and unwrapped to their values;
//   - an operator that writes an argument runs as its functional overload (Note [Functional
//     variants]): add_(x, y) as add(x, y), add.out(x, y, out=o) as add(x, y), and each written
//     functional tensor's value is replaced by the result (replace_and_commit), so its aliases
//     see the change; the call returns the written tensors, as the mutating operator does;
//   - any other operator runs as is, on the values; its results are wrapped as new functional
//     tensors when an argument was functional or none was a tensor (a factory).
// Either way the call below runs with Functionalize and the layers above it excluded
// (ExcludeFunctionalize). A result that shares memory with an argument is a view this layer has
// no kernel for: it could not follow mutations made through it, so the call is refused.
// A CompositeImplicitAutograd operator that reaches this layer undecomposed (the autograd keys
// excluded) runs its composite kernel on the functional tensors instead (decomposes_here).
// Writing a tensor that is not functional from functional ones is refused with PyTorch's error
// inside functionalize (the key included); outside it (the backward pass filling a gradient
// buffer) the functional tensors are read as their values. With no functional tensor at all the
// mutating operator runs as is, as in PyTorch (global state is not functionalized).

struct Unwrapped {
  bool any_tensor = false;
  bool any_functional = false;
};

Tensor unwrap(const Tensor& t, Unwrapped& u) {
  if (!t.defined()) return t;
  u.any_tensor = true;
  if (!is_functional(t)) return t;
  u.any_functional = true;
  return value_of(t);
}

// Replaces every functional tensor of stack[begin, end) with its synced value.
Unwrapped unwrap_arguments(Stack& stack, size_t begin, size_t end) {
  Unwrapped u;
  for (size_t i = begin; i < end; ++i) {
    IValue& v = stack[i];
    if (v.is_tensor()) {
      v = IValue(unwrap(v.to_tensor(), u));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> ts = v.to_tensor_list();
      for (Tensor& t : ts) t = unwrap(t, u);
      v = IValue(std::move(ts));
    } else if (v.is_optional_tensor_list()) {
      std::vector<std::optional<Tensor>> ts = v.to_optional_tensor_list();
      for (auto& t : ts) {
        if (t) t = unwrap(*t, u);
      }
      v = IValue(std::move(ts));
    }
  }
  return u;
}

const void* data_of(const Tensor& t) {
  return t.defined() ? t.storage().unsafe_get_impl()->data() : nullptr;
}

void refuse_views(const OperatorHandle& op, const std::vector<const void*>& inputs,
                  const Tensor& result) {
  const void* d = data_of(result);
  if (d == nullptr || result.numel() == 0) return;
  for (const void* in : inputs) {
    OPD_CHECK(in != d,
              "functionalize: {} returned a view of its input, and this layer has no kernel for "
              "it: mutations through the view could not be followed",
              op.operator_name().to_string());
  }
}

Tensor wrap_result(const Tensor& t) { return t.defined() ? to_functional(t) : t; }

void run_functional(const OperatorHandle& op, Stack* stack, size_t begin) {
  Unwrapped u = unwrap_arguments(*stack, begin, stack->size());
  std::vector<const void*> inputs;
  for (size_t i = begin; i < stack->size(); ++i) {
    const IValue& v = (*stack)[i];
    if (v.is_tensor()) inputs.push_back(data_of(v.to_tensor()));
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) inputs.push_back(data_of(t));
    }
  }
  std::erase(inputs, nullptr);
  {
    ExcludeFunctionalize below;
    op.call_boxed(stack);
  }
  if (u.any_tensor && !u.any_functional) return;
  for (size_t i = begin; i < stack->size(); ++i) {
    IValue& v = (*stack)[i];
    if (v.is_tensor()) {
      refuse_views(op, inputs, v.to_tensor());
      v = IValue(wrap_result(v.to_tensor()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> ts = v.to_tensor_list();
      for (Tensor& t : ts) {
        refuse_views(op, inputs, t);
        t = wrap_result(t);
      }
      v = IValue(std::move(ts));
    }
  }
}

void run_mutating(const OperatorHandle& op, Stack* stack, size_t begin) {
  const size_t num_args = stack->size() - begin;
  const std::vector<IValue> original(stack->begin() + static_cast<ptrdiff_t>(begin), stack->end());
  std::vector<size_t> written;
  for (size_t i = 0; i < num_args; ++i) {
    if (op.argument_is_written(i)) written.push_back(i);
  }
  bool any_functional = false;
  bool written_functional = true;
  for (size_t i = 0; i < num_args; ++i) {
    const IValue& v = original[i];
    const bool is_written = op.argument_is_written(i);
    auto visit = [&](const Tensor& t) {
      if (!t.defined()) return;
      const bool f = is_functional(t);
      any_functional = any_functional || f;
      if (is_written && !f) written_functional = false;
    };
    if (v.is_tensor()) visit(v.to_tensor());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) visit(t);
    }
  }
  if (!any_functional ||
      (!written_functional && !tls_is_dispatch_key_included(DispatchKey::Functionalize))) {
    // Outside functionalize (the backward pass writing a gradient buffer), functional tensors
    // are read as their values.
    unwrap_arguments(*stack, begin, stack->size());
    ExcludeFunctionalize below;
    op.call_boxed(stack);
    return;
  }
  OPD_CHECK(written_functional,
            "mutating a non-functional tensor with a functional tensor is not allowed. Please "
            "ensure that all of your inputs are wrapped inside of a functionalize() call.");
  for (size_t i : written) {
    OPD_CHECK(original[i].is_tensor(),
              "functionalize: {} writes a list of tensors, which this layer does not functionalize",
              op.operator_name().to_string());
  }
  const FunctionalVariant& fv = functional_variant_of(op);
  const OperatorHandle functional = find_operator_or_throw(fv.name, fv.overload);
  Stack call;
  for (size_t i = 0; i < num_args; ++i) {
    if (fv.keep_argument[i]) call.push_back(original[i]);
  }
  call.insert(call.end(), fv.extra_arguments.begin(), fv.extra_arguments.end());
  unwrap_arguments(call, 0, call.size());
  {
    ExcludeFunctionalize below;
    functional.call_boxed(&call);
  }
  OPD_CHECK(call.size() >= fv.written_arguments.size() && !call.empty(),
            "functionalize: {}.{} returned {} values for the {} tensors {} writes", fv.name,
            fv.overload, call.size(), fv.written_arguments.size(), op.operator_name().to_string());
  for (size_t k = 0; k < fv.written_arguments.size(); ++k) {
    const Tensor& target = original[fv.written_arguments[k]].to_tensor();
    replace_and_commit(target, call[k].to_tensor());
    // As the in-place kernel would: autograd compares versions to find views of a changed base.
    target.bump_version();
  }
  // The mutating operator returns its written arguments, in order.
  stack->erase(stack->begin() + static_cast<ptrdiff_t>(begin), stack->end());
  const size_t num_returns = op.num_returns();
  size_t next = 0;
  for (size_t j = 0; j < num_returns; ++j) {
    if (op.return_is_written(j) && next < fv.written_arguments.size()) {
      stack->push_back(original[fv.written_arguments[next++]]);
    } else {
      const size_t k = std::min(j, call.size() - 1);
      stack->push_back(IValue(wrap_result(call[k].to_tensor())));
    }
  }
}

// Whether `op` should run its CompositeImplicitAutograd kernel here, on the functional tensors,
// as it does at the autograd keys: reshape, flatten, contiguous and the other composite views
// reach this layer undecomposed when the autograd keys are excluded (no_grad, the backward
// pass), and run below it they would return views of values.
bool decomposes_here(const OperatorHandle& op, DispatchKey backend) {
  if (!tls_is_dispatch_key_excluded(autograd_key_for(backend_of(backend)))) return false;
  return op.has_kernel_for_dispatch_key(DispatchKey::CompositeImplicitAutograd) &&
         !op.has_kernel_for_dispatch_key(backend) &&
         !op.has_kernel_for_dispatch_key(DispatchKey::CompositeExplicitAutograd) &&
         !op.has_kernel_for_dispatch_key(DispatchKey::CompositeExplicitAutogradNonFunctional);
}

void fallback(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  const DispatchKey backend = (ks & kBackendKeySet).highest_priority_key();
  if (backend != DispatchKey::Undefined && decomposes_here(op, backend)) {
    // The backend key's entry is the composite kernel; its calls come back to this layer.
    op.redispatch_boxed(DispatchKeySet(backend), stack);
    return;
  }
  const size_t num_args = op.num_arguments();
  OPD_CHECK(stack->size() >= num_args, "{}: {} arguments on the stack, the schema has {}",
            op.operator_name().to_string(), stack->size(), num_args);
  const size_t begin = stack->size() - num_args;
  bool writes = false;
  for (size_t i = 0; i < num_args; ++i) writes = writes || op.argument_is_written(i);
  if (writes) {
    run_mutating(op, stack, begin);
  } else {
    run_functional(op, stack, begin);
  }
}

}  // namespace

void register_fallback(Library& m) {
  m.fallback(CppFunction::from_kernel(KernelFunction::make_from_boxed_function(&fallback)));
}

}  // namespace opd::functionalize
