// The autograd fallback: what an operator without an Autograd kernel does when its inputs
// require grad (PyTorch 2.x's basicAutogradNotImplementedFallback).

#include "autograd/fallback.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "autograd/autograd_meta.h"
#include "opd/warning.h"

namespace opd::autograd {
namespace {

// Note [Autograd fallback]
// The core's fallthrough on the Autograd keys let an operator without an Autograd kernel (a
// vendor's acme::scale) return a result without history when its input required grad: a
// wrong gradient and no word about it. This plugin covers that fallthrough with a boxed
// fallback, as PyTorch 2.x does. In "warn" mode (the default) the outputs of such a call get a
// node that, when backward reaches it, warns once per operator and passes no gradient on; in
// "error" mode the node raises instead; in "nothing" mode no node is made. In every mode an
// argument the schema marks as written gets its version bumped, so a saved tensor that a
// vendor's in-place operator changed is caught at backward. Outputs that are not floating
// point, outputs the schema marks as written, and outputs that already require grad (the
// kernel returned an input) are left alone, as PyTorch leaves them. Unloading the plugin
// brings the core's fallthrough back. Most calls never reach this code: see Note [Autograd
// fallback fast path] in operator_entry.h.

enum class Mode : int { Nothing, Warn, Error };

std::atomic<Mode> g_mode{Mode::Warn};

std::string message(const std::string& op) {
  return fmt::format(
      "{}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
      "backprop through it. This may lead to silently incorrect behavior. If your operator is "
      "differentiable, please ensure you have registered an autograd kernel to the correct "
      "Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If "
      "your operator is not differentiable, or to squash this warning and use the previous "
      "behavior, please register opd::CppFunction::make_fallthrough() to DispatchKey::Autograd.",
      op);
}

// Once per operator for the process, as a Python warning shows once per place.
void warn_once(const std::string& op) {
  static std::mutex mu;
  static std::set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!warned.insert(op).second) return;
  }
  warn(message(op));
}

class NotImplementedNode final : public Node {
 public:
  NotImplementedNode(std::string op, Mode mode) : op_(std::move(op)), mode_(mode) {}
  // PyTorch's names: WarnNotImplemented (the warning fallback), NotImplemented (the error one).
  std::string name() const override {
    return mode_ == Mode::Error ? "NotImplemented" : "WarnNotImplemented";
  }

 protected:
  variable_list apply(variable_list&&) override {
    if (mode_ == Mode::Error) throw Error(message(op_));
    warn_once(op_);
    return variable_list(next_edges().size());
  }

 private:
  std::string op_;
  Mode mode_;
};

// Calls fn(tensor, index of its stack element) for each defined tensor in stack[begin, end).
template <class F>
void for_each_tensor(const Stack& stack, size_t begin, size_t end, F fn) {
  for (size_t i = begin; i < end; ++i) {
    const IValue& v = stack[i];
    if (v.is_tensor()) {
      if (v.to_tensor().defined()) fn(v.to_tensor(), i - begin);
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined()) fn(t, i - begin);
      }
    } else if (v.is_optional_tensor_list()) {
      for (const auto& t : v.to_optional_tensor_list()) {
        if (t && t->defined()) fn(*t, i - begin);
      }
    }
  }
}

void redispatch_below_autograd(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  AutoDispatchBelowAutograd guard;
  op.redispatch_boxed(ks - kAutogradKeySet, stack);
}

// What the fallback reads of the schema, read at once.
struct SchemaFacts {
  std::vector<bool> written_arguments;
  std::vector<bool> written_returns;
};

// None when the operator's def was undone while this call was on its way (a Library closed
// on another thread): the call then goes on below autograd, where it meets the same fate as
// any call of an operator being removed.
std::optional<SchemaFacts> schema_facts(const OperatorHandle& op) {
  try {
    SchemaFacts f;
    for (size_t i = 0, n = op.num_arguments(); i < n; ++i) {
      f.written_arguments.push_back(op.argument_is_written(i));
    }
    for (size_t i = 0, n = op.num_returns(); i < n; ++i) {
      f.written_returns.push_back(op.return_is_written(i));
    }
    return f;
  } catch (const Error&) {
    return std::nullopt;
  }
}

void fallback(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  const Mode mode = g_mode.load(std::memory_order_relaxed);
  const std::optional<SchemaFacts> facts = schema_facts(op);
  if (!facts) return redispatch_below_autograd(op, ks, stack);
  const size_t num_args = facts->written_arguments.size();
  OPD_CHECK(stack->size() >= num_args, "{}: {} arguments on the stack, the schema has {}",
            op.operator_name().to_string(), stack->size(), num_args);
  const size_t begin = stack->size() - num_args;

  // Reached only with the Autograd keys in the call's key set, so grad mode is on.
  bool any_requires_grad = false;
  std::vector<Tensor> written;
  for_each_tensor(*stack, begin, stack->size(), [&](const Tensor& t, size_t i) {
    if (facts->written_arguments[i]) written.push_back(t);
    any_requires_grad = any_requires_grad || (mode != Mode::Nothing && requires_grad(t));
  });
  std::shared_ptr<NotImplementedNode> node;
  if (any_requires_grad) {
    node = make_node<NotImplementedNode>(op.operator_name().name, mode);
    edge_list edges;
    for_each_tensor(*stack, begin, stack->size(),
                    [&](const Tensor& t, size_t) { edges.push_back(gradient_edge(t)); });
    node->set_next_edges(std::move(edges));
  }
  redispatch_below_autograd(op, ks, stack);
  for (const Tensor& t : written) t.bump_version();
  if (!node) return;
  const size_t num_returns = std::min(facts->written_returns.size(), stack->size());
  const size_t first = stack->size() - num_returns;
  for_each_tensor(*stack, first, stack->size(), [&](const Tensor& t, size_t i) {
    if (!is_differentiable_type(t.scalar_type()) || facts->written_returns[i] || requires_grad(t)) {
      return;
    }
    set_history(t, node);
  });
}

}  // namespace

void register_fallback(Library& m) {
  m.fallback(CppFunction::from_kernel(KernelFunction::make_autograd_fallback(&fallback)));
}

void set_fallback_mode_kernel(std::string_view mode) {
  Mode m;
  if (mode == "nothing") {
    m = Mode::Nothing;
  } else if (mode == "warn") {
    m = Mode::Warn;
  } else if (mode == "error") {
    m = Mode::Error;
  } else {
    throw ValueError(fmt::format(
        "Unsupported AutogradFallbackMode: {} (expected \"nothing\", \"warn\" or \"error\")",
        mode));
  }
  g_mode.store(m, std::memory_order_relaxed);
}

std::string fallback_mode_kernel() {
  switch (g_mode.load(std::memory_order_relaxed)) {
    case Mode::Nothing:
      return "nothing";
    case Mode::Warn:
      return "warn";
    case Mode::Error:
      return "error";
  }
  return "warn";
}

}  // namespace opd::autograd
