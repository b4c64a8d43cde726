#pragma once

// Custom autograd functions, as PyTorch's torch::autograd::Function: a forward and a backward
// written by hand, for an operation autograd cannot (or should not) differentiate itself.
//
//   struct Scale : opd::autograd::Function<Scale> {
//     static opd::Tensor forward(opd::autograd::AutogradContext* ctx, const opd::Tensor& x,
//                                double s) {
//       ctx->saved_data["s"] = s;
//       return x * s;
//     }
//     static opd::autograd::tensor_list backward(opd::autograd::AutogradContext* ctx,
//                                                opd::autograd::tensor_list grads) {
//       return {grads[0] * ctx->saved_data["s"].to_double(), opd::Tensor()};
//     }
//   };
//   opd::Tensor y = Scale::apply(x, 2.0);
//
// forward runs without recording (as under NoGradGuard) and returns a Tensor or a tensor_list.
// backward receives one gradient per output and returns one per forward argument (undefined
// for an argument that is not a tensor, or that needs none); written with dispatched
// operators, it is itself differentiable (create_graph, double backward). The graph's node
// (named "CppNode<Scale>") lives in the autograd plugin, which this header reaches through the
// dispatcher (operator autograd::_record_function): without it apply throws Error naming it.
// The node keeps the code of forward's caller mapped (the plugin it is in) while it lives.
//
// Not done here, as in PyTorch's C++ API: forward-mode AD (jvp) and setup_context.

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "opd/error.h"
#include "opd/export.h"
#include "opd/ivalue.h"
#include "opd/kernel_function.h"
#include "opd/library.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/plugin.h"
#include "opd/plugin_object.h"
#include "opd/tensor.h"

namespace opd::autograd {

using tensor_list = std::vector<Tensor>;

template <class T>
struct Function;

namespace detail {

template <class T>
class FunctionBackwardOf;

// The backward of one Function<T>::apply, as the autograd plugin's node calls it. An interface
// of the plugin API (implemented by FunctionBackwardOf<T> in the caller's code).
class FunctionBackward {
 public:
  virtual ~FunctionBackward() = default;
  // "CppNode<Scale>": the node's name.
  virtual std::string name() const = 0;
  // `grads`: one per forward output; `saved`: what forward saved, unpacked (checked against
  // in-place changes); `needs_input_grad`: one per tensor input. One gradient per forward
  // argument back.
  virtual tensor_list backward(tensor_list grads, tensor_list saved,
                               std::vector<bool> needs_input_grad) = 0;
};

// The kind of Capsule a FunctionBackward travels in.
inline constexpr std::string_view kFunctionBackwardCapsule = "opd.autograd.FunctionBackward";

// The kind of Capsule a FunctionRecord travels in.
inline constexpr std::string_view kFunctionRecordCapsule = "opd.autograd.FunctionRecord";

// What one apply hands the autograd plugin: the one argument of its operator
// autograd::_record_function(Capsule record) -> Tensor[], which returns the outputs given their
// history. One Capsule, not a list argument each: an apply costs the boxed call of one IValue
// (Note [Finding autograd::_record_function], plugin_api/src/tensor_autograd.cpp). Made by the
// caller's code, read by the plugin: its layout is part of the ABI (the size is checked below).
struct FunctionRecord {
  IValue backward;      // a kFunctionBackwardCapsule Capsule
  bool record = false;  // grad mode on and a tensor input requires grad: make the node
  tensor_list inputs;   // the tensor arguments (a Tensor[] argument's elements one by one)
  std::vector<bool> is_variable_input;  // per forward argument (per Tensor[] element)
  tensor_list outputs;
  tensor_list to_save;
  tensor_list dirty;
  tensor_list non_differentiable;
  bool materialize_grads = true;
};
static_assert(
    sizeof(FunctionRecord) == 200 && alignof(FunctionRecord) == 8,
    "FunctionRecord crosses the plugin boundary: a change of its layout is an ABI change");

// Calls autograd::_record_function: the outputs, given their history. Throws Error when the
// autograd plugin is not loaded.
OPD_API tensor_list record_function(FunctionRecord record);
// Whether `t` requires grad; false, without a dispatcher call, for a tensor without autograd
// state.
OPD_API bool input_requires_grad(const Tensor& t);
// Throws Error unless the autograd plugin is loaded (names it and `api`).
OPD_API void check_autograd_plugin(const char* api);

// "Scale" for struct Scale (its demangled name).
template <class T>
std::string type_name() {
  int status = 0;
  char* demangled = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
  std::string out = status == 0 && demangled ? demangled : typeid(T).name();
  std::free(demangled);
  return out;
}

}  // namespace detail

// What forward keeps for backward, as PyTorch's torch::autograd::AutogradContext.
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Values other than tensors, for backward.
  std::unordered_map<std::string, IValue> saved_data;

  // Tensors for backward (inputs or outputs; undefined ones too). At most once, in forward.
  void save_for_backward(tensor_list to_save) { to_save_ = std::move(to_save); }
  // The inputs forward changed in place; they must be returned as outputs. In forward.
  void mark_dirty(const tensor_list& inputs) { dirty_ = inputs; }
  // Outputs that do not require grad (indices, masks). In forward.
  void mark_non_differentiable(const tensor_list& outputs) { non_differentiable_ = outputs; }
  // Whether backward receives zeros (true, the default) or undefined tensors for outputs that
  // got no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }

  // In backward: the tensors save_for_backward kept. The node checked them first: one that was
  // changed in place since, or a graph already freed, fails there with PyTorch's error.
  tensor_list get_saved_variables() const {
    OPD_CHECK(in_backward_, "get_saved_variables: saved tensors are only available in backward");
    return saved_;
  }
  // Whether the gradient of tensor input `i` (counting a Tensor[] argument's elements one by
  // one) is needed: in forward, whether it requires grad; in backward, whether the graph uses it.
  bool needs_input_grad(size_t i) const {
    return i < needs_input_grad_.size() && needs_input_grad_[i];
  }

 private:
  template <class T>
  friend struct Function;
  template <class T>
  friend class detail::FunctionBackwardOf;

  tensor_list to_save_;
  tensor_list dirty_;
  tensor_list non_differentiable_;
  tensor_list saved_;  // in backward
  std::vector<bool> needs_input_grad_;
  bool materialize_grads_ = true;
  bool in_backward_ = false;
};

namespace detail {

template <class T>
class FunctionBackwardOf final : public FunctionBackward {
 public:
  std::string name() const override { return "CppNode<" + type_name<T>() + ">"; }
  tensor_list backward(tensor_list grads, tensor_list saved,
                       std::vector<bool> needs_input_grad) override {
    ctx.saved_ = std::move(saved);
    ctx.needs_input_grad_ = std::move(needs_input_grad);
    ctx.in_backward_ = true;
    // The unpacked tensors must not outlive the call: a saved output holds this node.
    struct Reset {
      AutogradContext& ctx;
      ~Reset() {
        ctx.saved_.clear();
        ctx.in_backward_ = false;
      }
    } reset{ctx};
    return T::backward(&ctx, std::move(grads));
  }

  AutogradContext ctx;
};

inline void extract_inputs(std::vector<bool>& is_var, tensor_list& inputs, const Tensor& t) {
  is_var.push_back(true);
  inputs.push_back(t);
}
inline void extract_inputs(std::vector<bool>& is_var, tensor_list& inputs,
                           const std::optional<Tensor>& t) {
  const bool defined = t.has_value() && t->defined();
  is_var.push_back(defined);
  if (defined) inputs.push_back(*t);
}
inline void extract_inputs(std::vector<bool>& is_var, tensor_list& inputs, const tensor_list& ts) {
  for (const Tensor& t : ts) extract_inputs(is_var, inputs, t);
}
inline void extract_inputs(std::vector<bool>& is_var, tensor_list& inputs, TensorList ts) {
  for (const Tensor& t : ts) extract_inputs(is_var, inputs, t);
}
template <class A>
void extract_inputs(std::vector<bool>& is_var, tensor_list&, const A&) {
  is_var.push_back(false);
}

template <class R>
tensor_list to_tensor_list(R&& out) {
  if constexpr (std::is_same_v<std::decay_t<R>, Tensor>) {
    return {std::forward<R>(out)};
  } else {
    return tensor_list(std::forward<R>(out));
  }
}

// The Autograd kernel of an operator whose arguments are forward's after the context.
template <class F, class Forward>
struct FunctionKernel;
template <class F, class R, class... A>
struct FunctionKernel<F, R (*)(AutogradContext*, A...)> {
  static R call(A... args) { return F::apply(std::forward<A>(args)...); }
};

}  // namespace detail

template <class T>
struct Function {
  // Runs T::forward and, when grad mode is on and a tensor argument requires grad, gives the
  // outputs a node that runs T::backward. The template parameter X keeps T::forward unnamed
  // until apply is used (T derives from Function<T>).
  template <class X = T, class... Args>
  static auto apply(Args&&... args)
      -> std::enable_if_t<std::is_same_v<X, T>,
                          decltype(X::forward(nullptr, std::forward<Args>(args)...))> {
    using Out = decltype(X::forward(nullptr, std::forward<Args>(args)...));
    static_assert(std::is_same_v<Out, Tensor> || std::is_same_v<Out, tensor_list>,
                  "Function<T>::forward must return a Tensor or a tensor_list");
    detail::check_autograd_plugin("Function::apply");
    auto backward =
        allocate_plugin_shared<detail::FunctionBackwardOf<T>>(nullptr, this_plugin_reference());
    AutogradContext& ctx = backward->ctx;
    detail::FunctionRecord r;
    (detail::extract_inputs(r.is_variable_input, r.inputs, args), ...);
    const bool grad_mode = !tls_local_dispatch_key_set().excluded.has_any(kAutogradKeySet);
    for (const Tensor& t : r.inputs) {
      const bool needs = grad_mode && detail::input_requires_grad(t);
      ctx.needs_input_grad_.push_back(needs);
      r.record = r.record || needs;
    }
    std::optional<Out> out;
    {
      ExcludeDispatchKeyGuard no_grad(kAutogradKeySet);
      out.emplace(T::forward(&ctx, std::forward<Args>(args)...));
    }
    r.outputs = detail::to_tensor_list(std::move(*out));
    r.to_save = std::move(ctx.to_save_);
    r.dirty = std::move(ctx.dirty_);
    r.non_differentiable = std::move(ctx.non_differentiable_);
    r.materialize_grads = ctx.materialize_grads_;
    std::shared_ptr<detail::FunctionBackward> base = std::move(backward);
    r.backward = IValue::make_capsule(std::string(detail::kFunctionBackwardCapsule),
                                      std::static_pointer_cast<void>(std::move(base)));
    tensor_list outputs = detail::record_function(std::move(r));
    if constexpr (std::is_same_v<Out, Tensor>) {
      return std::move(outputs.at(0));
    } else {
      return outputs;
    }
  }
};

// An Autograd kernel that runs F::apply, for an operator whose arguments are those of
// F::forward after the context (so that the operator has gradients wherever it is called
// from: C++, opd eval, Python). F::forward calls the operator itself, which then runs below
// autograd:
//   OPD_LIBRARY_IMPL(acme, Autograd, m) { m.impl("scale", autograd::function_kernel<Scale>()); }
template <class F>
CppFunction function_kernel() {
  return CppFunction(
      CompileTimeFunction<&detail::FunctionKernel<F, decltype(&F::forward)>::call>());
}

}  // namespace opd::autograd
