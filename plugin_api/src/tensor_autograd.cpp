// Tensor's autograd methods and opd/autograd.h: calls of the operators the autograd plugin
// serves.

#include <atomic>

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

// Throws Error: `what`, which `api` needs, belongs to the autograd plugin, which is not loaded.
[[noreturn]] void throw_not_loaded(const char* api, const char* what, const char* name) {
  opd::detail::throw_check<Error>(
      __FILE__, __LINE__,
      fmt::format("opd::autograd::{}: the autograd plugin (libopd_autograd.so), to which {} "
                  "belongs, is not loaded ({} is not defined)",
                  api, what, name));
}

// The autograd plugin's operator `name`, looked up on each call (it goes with the plugin);
// `what` is what of the plugin's `api` needs.
OperatorHandle plugin_operator(const char* api, const char* what, const char* name) {
  auto op = Dispatcher::singleton().find_schema(OperatorName{name, ""});
  if (!op) throw_not_loaded(api, what, name);
  return *op;
}

OperatorHandle fallback_operator(const char* api, const char* name) {
  return plugin_operator(api, "the autograd fallback", name);
}

constexpr const char* kCustomFunctions = "recording custom autograd functions";
constexpr const char* kRecordFunction = "autograd::_record_function";

// Note [Finding autograd::_record_function]
// Every Function::apply calls the autograd plugin's autograd::_record_function, which comes and
// goes with the plugin. Looking it up by name takes the registration mutex and builds its name,
// twice per apply (once to check before the forward runs, once to call): a fifth of an apply's
// cost. Instead a registration listener keeps the operator's entry in an atomic pointer, set
// after its def and cleared before its schema goes (under the registration mutex either way). A
// caller reads the pointer inside a CallScope, so an entry cleared meanwhile is retired, not
// freed, until the call has returned (Note [Kernel reclamation] in dispatcher.cpp), as a kernel
// read from the dispatch table is. The call itself boxes one IValue, a Capsule holding the
// whole FunctionRecord: nine arguments, six of them lists, cost another fifth.
std::atomic<OperatorEntry*> record_function_entry{nullptr};

class RecordFunctionListener final : public OpRegistrationListener {
 public:
  void on_operator_registered(const OperatorHandle& op) override {
    if (is_record_function(op)) record_function_entry.store(&op.entry(), std::memory_order_release);
  }
  void on_operator_deregistered(const OperatorHandle& op) override {
    if (is_record_function(op)) record_function_entry.store(nullptr, std::memory_order_release);
  }

 private:
  static bool is_record_function(const OperatorHandle& op) {
    return op.operator_name().overload_name.empty() && op.operator_name().name == kRecordFunction;
  }
};

// The listener, added on the first use (it replays the operators already defined). Never
// removed: it must outlive every registration. (A static pointer, so that LeakSanitizer sees it
// reachable.)
void watch_record_function() {
  static auto* listener = new RegistrationHandle(Dispatcher::singleton().add_registration_listener(
      std::make_unique<RecordFunctionListener>()));
  (void)listener;
}

// The entry of autograd::_record_function; throws Error naming `api` when the autograd plugin
// is not loaded. REQUIRES: the caller is in a CallScope for as long as it uses the entry.
OperatorEntry& record_function_or_throw(const char* api) {
  watch_record_function();
  OperatorEntry* e = record_function_entry.load(std::memory_order_acquire);
  if (e == nullptr) throw_not_loaded(api, kCustomFunctions, kRecordFunction);
  return *e;
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

namespace detail {

void check_autograd_plugin(const char* api) {
  opd::detail::CallScope scope;
  record_function_or_throw(api);
}

bool input_requires_grad(const Tensor& t) {
  return opd::detail::has_autograd_state(t) && t.requires_grad();
}

tensor_list record_function(FunctionRecord r) {
  opd::detail::CallScope scope;
  OperatorHandle op(&record_function_or_throw("Function::apply"));
  Stack stack;
  stack.push_back(IValue::make_capsule(std::string(kFunctionRecordCapsule),
                                       std::make_shared<FunctionRecord>(std::move(r))));
  op.call_boxed(&stack);
  OPD_INTERNAL_ASSERT(stack.size() == 1 && stack[0].is_tensor_list(), "{} returned {} values",
                      kRecordFunction, stack.size());
  return std::move(stack[0]).to_tensor_list();
}

}  // namespace detail
}  // namespace autograd
}  // namespace opd
