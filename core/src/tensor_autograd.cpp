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

// The autograd plugin's operator `name`, looked up on each call (it goes with the plugin).
OperatorHandle fallback_operator(const char* api, const char* name) {
  auto op = Dispatcher::singleton().find_schema(OperatorName{name, ""});
  OPD_CHECK(op.has_value(),
            "opd::autograd::{}: the autograd plugin (libopd_autograd.so), to which the autograd "
            "fallback belongs, is not loaded ({} is not defined)",
            api, name);
  return *op;
}

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

}  // namespace autograd
}  // namespace opd
