// Tensor's autograd methods and opd/autograd.h: calls of the operators the autograd plugin
// serves.

#include "opd/autograd.h"
#include "opd/dispatcher.h"

namespace opd {

void Tensor::backward(const std::optional<Tensor>& gradient, std::optional<bool> retain_graph,
                      bool create_graph) const {
  _backward(*this, {}, gradient, retain_graph, create_graph);
}

Tensor Tensor::grad() const { return _opd_grad(*this); }

bool Tensor::requires_grad() const { return _opd_requires_grad(*this); }

namespace autograd {

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  return _opd_autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                            allow_unused);
}

std::string grad_fn_name(const Tensor& t) {
  // Looked up on each call: the operator belongs to the plugin and goes when it is unloaded.
  return Dispatcher::singleton()
      .find_schema_or_throw("autograd::grad_fn_name", "")
      .typed<std::string(const Tensor&)>()
      .call(t);
}

void set_grad(const Tensor& t, const Tensor& grad) {
  _opd_set_grad(const_cast<Tensor&>(t),
                grad.defined() ? std::optional<Tensor>(grad) : std::nullopt);
}

namespace {

// The autograd plugin's operator `name`, looked up on each call (it goes with the plugin);
// `what` is what of the plugin's `api` needs.
OperatorHandle plugin_operator(const char* api, const char* what, const char* name) {
  auto op = Dispatcher::singleton().find_schema(OperatorName{name, ""});
  OPD_CHECK(op.has_value(),
            "opd::autograd::{}: the autograd plugin (libopd_autograd.so), to which {} belongs, is "
            "not loaded ({} is not defined)",
            api, what, name);
  return *op;
}

OperatorHandle fallback_operator(const char* api, const char* name) {
  return plugin_operator(api, "the autograd fallback", name);
}

constexpr const char* kCustomFunctions = "custom autograd functions";
constexpr const char* kRecordFunction = "autograd::_record_function";

}  // namespace

void set_fallback_mode(std::string_view mode) {
  fallback_operator("set_fallback_mode", "autograd::_set_fallback_mode")
      .typed<void(std::string_view)>()
      .call(mode);
}

std::string fallback_mode() {
  return fallback_operator("fallback_mode", "autograd::_fallback_mode")
      .typed<std::string()>()
      .call();
}

namespace detail {

void check_autograd_plugin(const char* api) {
  plugin_operator(api, kCustomFunctions, kRecordFunction);
}

bool input_requires_grad(const Tensor& t) {
  return opd::detail::has_autograd_state(t) && t.requires_grad();
}

tensor_list record_function(FunctionRecord r) {
  OperatorHandle op = plugin_operator("Function::apply", kCustomFunctions, kRecordFunction);
  Stack stack;
  stack.reserve(9);
  stack.emplace_back(std::move(r.backward));
  stack.emplace_back(r.record);
  stack.emplace_back(std::move(r.inputs));
  stack.emplace_back(std::move(r.is_variable_input));
  stack.emplace_back(std::move(r.outputs));
  stack.emplace_back(std::move(r.to_save));
  stack.emplace_back(std::move(r.dirty));
  stack.emplace_back(std::move(r.non_differentiable));
  stack.emplace_back(r.materialize_grads);
  op.call_boxed(&stack);
  OPD_INTERNAL_ASSERT(stack.size() == 1 && stack[0].is_tensor_list(), "{} returned {} values",
                      kRecordFunction, stack.size());
  return stack[0].to_tensor_list();
}

}  // namespace detail
}  // namespace autograd
}  // namespace opd
