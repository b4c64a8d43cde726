#include "opd/fx/capture.h"

#include <fmt/format.h>

#include <iterator>

#include "opd/bind/binding.h"
#include "opd/bind/tensor_values.h"
#include "opd/error.h"
#include "opd/function_schema.h"

namespace opd::fx {

// Note [Graph capture]
// ~~~~~~~~~~~~~~~~~~~~
// torch's make_fx traces with ProxyTorchDispatchMode: each operator reaches the mode at the
// Python key, runs on the real tensors, and is recorded with its arguments mapped to the
// proxies (nodes) of the tensors that made them. CaptureMode does the same from C++, as a
// DispatchMode: the arguments are mapped before the operator runs (an in-place operator's
// result is its input's TensorImpl, which then stands for the new node, as torch's proxy
// does), the operator runs below the Python key, and every tensor result is mapped to the node,
// or to a getitem node per result when the operator has several (or returns a list). With
// another mode below it on the stack (make_fx's tracing_mode="fake" pushes a FakeTensorMode
// first) the operator is called again, which reaches that mode, as torch's proxy mode calls
// func(*args); so is an operator on a tensor subclass's instance, which reaches its
// __torch_dispatch__ (a wrapper subclass has no memory a backend could read); otherwise the
// operator runs below the Python key.
//
// The arguments print as the Python key's fallback passes them to __torch_dispatch__ in torch
// (parseIValuesToPyArgsKwargs): positional arguments up to the last that differs from its
// default, keyword-only ones by name where they differ from their default; a wrapped number
// (the 2 of x * 2) as the number. A tensor that no input or recorded operator made (a tensor
// literal inside the program, a tensor from outside) becomes a module attribute,
// `_tensor_constant0`, as torch's make_fx does. torch also records lift_fresh_copy of such a
// tensor, where torch.tensor() made it; opdispatch.tensor() runs no operator, so there is none.

namespace {

IValue number_of(const Tensor& wrapped) {
  bind::HostValues v = bind::read_values(wrapped);
  switch (v.kind) {
    case bind::HostValues::Kind::Bool:
      return IValue(v.ints.at(0) != 0);
    case bind::HostValues::Kind::Int:
      return IValue(v.ints.at(0));
    case bind::HostValues::Kind::Float:
      return IValue(v.reals.at(0));
    case bind::HostValues::Kind::Complex:
      return IValue(std::complex<double>(v.reals.at(0), v.imags.at(0)));
  }
  return {};
}

// Whether an argument is (or lists) a tensor of a subclass (its key set has the Python keys).
bool has_subclass_tensor(const IValue* args, size_t n) {
  auto is_subclass = [](const Tensor& t) { return t.key_set().has_any(kPythonKeySet); };
  for (size_t i = 0; i < n; ++i) {
    const IValue& v = args[i];
    if (v.is_tensor() && is_subclass(v.to_tensor())) return true;
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (is_subclass(t)) return true;
      }
    }
    if (v.is_optional_tensor_list()) {
      for (const auto& t : v.to_optional_tensor_list()) {
        if (t && is_subclass(*t)) return true;
      }
    }
  }
  return false;
}

bool equals_default(const Argument& a, const IValue& v) {
  if (!a.default_value()) return false;
  bool none = v.is_none() || (v.is_tensor() && !v.to_tensor().defined());
  if (a.default_value()->is_none() || none) return a.default_value()->is_none() && none;
  if (v.is_tensor()) return false;
  try {
    return bind::default_argument(*a.default_value(), *a.type()) == v;
  } catch (const Error&) {  // a default with no value of the argument's type: printed
    return false;
  }
}

}  // namespace

CaptureMode::CaptureMode() : graph_(std::make_shared<Graph>()) {}

const Node& CaptureMode::add_input(std::string_view name, const IValue& value,
                                   std::optional<IValue> default_value) {
  const Node& n = graph_->placeholder(name, std::move(default_value));
  record_result(n, value);
  return n;
}

void CaptureMode::record_result(const Node& node, const IValue& v) {
  if (v.is_tensor() && v.to_tensor().defined()) {
    nodes_of_[v.to_tensor().unsafe_get_impl()] = &node;
    kept_.push_back(v.to_tensor());
  }
}

// A tensor that is not a node's may still be one's value under another TensorImpl: autograd
// saves an operator's output as a detached shallow copy (tanh's result for tanh_backward), as
// PyTorch's SavedVariable does. Such a tensor shares the node's storage with the same view of
// it (offset, sizes, strides, dtype); it stands for the latest node of that tensor.
const Node* CaptureMode::node_of_alias(const Tensor& t) const {
  const Storage& storage = t.storage();
  if (!storage.defined()) return nullptr;
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
    const Tensor& k = *it;
    if (k.storage().is_same(storage) && k.storage_offset() == t.storage_offset() &&
        k.dtype() == t.dtype() && k.sizes() == t.sizes() && k.strides() == t.strides()) {
      return nodes_of_.at(k.unsafe_get_impl());
    }
  }
  return nullptr;
}

Arg CaptureMode::arg_for(const IValue& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined()) return Arg::of(IValue());
    if (auto it = nodes_of_.find(t.unsafe_get_impl()); it != nodes_of_.end()) {
      return Arg::of(*it->second);
    }
    if (t.unsafe_get_impl()->is_wrapped_number()) return Arg::of(number_of(t));
    if (const Node* same = node_of_alias(t)) return Arg::of(*same);
    const Node& attr = graph_->get_attr(fmt::format("_tensor_constant{}", tensor_constants_++), t);
    record_result(attr, v);
    return Arg::of(attr);
  }
  if (v.is_tensor_list()) {
    std::vector<Arg> items;
    for (const Tensor& t : v.to_tensor_list()) items.push_back(arg_for(IValue(t)));
    return Arg::list(std::move(items));
  }
  if (v.is_optional_tensor_list()) {
    std::vector<Arg> items;
    for (const auto& t : v.to_optional_tensor_list()) {
      items.push_back(t ? arg_for(IValue(*t)) : Arg::of(IValue()));
    }
    return Arg::list(std::move(items));
  }
  if (v.is_generic_list() || v.is_tuple()) {
    std::vector<Arg> items;
    for (const IValue& x : v.is_tuple() ? v.to_tuple() : v.to_generic_list()) {
      items.push_back(arg_for(x));
    }
    return v.is_tuple() ? Arg::tuple(std::move(items)) : Arg::list(std::move(items));
  }
  return Arg::of(v);
}

void CaptureMode::dispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  OPD_CHECK(std::this_thread::get_id() == owner_,
            "make_fx: the capture mode of one thread was pushed on another; a capture records the "
            "operators of the thread that made it");
  const FunctionSchema& schema = op.schema();
  const auto& arguments = schema.arguments();
  OPD_INTERNAL_ASSERT(stack->size() >= arguments.size());
  const IValue* in = stack->data() + (stack->size() - arguments.size());
  size_t kwarg_only_start = 0;
  while (kwarg_only_start < arguments.size() && !arguments[kwarg_only_start].kwarg_only()) {
    ++kwarg_only_start;
  }
  size_t positional_end = kwarg_only_start;
  while (positional_end > 0 &&
         equals_default(arguments[positional_end - 1], in[positional_end - 1])) {
    --positional_end;
  }
  std::vector<Arg> args;
  std::vector<std::pair<std::string, Arg>> kwargs;
  for (size_t i = 0; i < positional_end; ++i) args.push_back(arg_for(in[i]));
  for (size_t i = kwarg_only_start; i < arguments.size(); ++i) {
    if (!equals_default(arguments[i], in[i]))
      kwargs.emplace_back(arguments[i].name(), arg_for(in[i]));
  }
  size_t below = stack->size() - arguments.size();
  if (dispatch_mode_stack_len() > 0 || has_subclass_tensor(in, arguments.size())) {
    // The next mode, or the tensor subclass's handler. call_boxed wants a stack of exactly
    // the arguments.
    Stack call(std::make_move_iterator(stack->begin() + below),
               std::make_move_iterator(stack->end()));
    stack->resize(below);
    op.call_boxed(&call);
    for (IValue& r : call) stack->push_back(std::move(r));
  } else {
    redispatch_below_python(op, keys, stack);
  }
  const Node& node = graph_->call_function(op, std::move(args), std::move(kwargs));
  size_t results = stack->size() - below;
  if (results == 1 && (*stack)[below].is_tensor_list()) {
    const auto& list = (*stack)[below].to_tensor_list();
    for (size_t i = 0; i < list.size(); ++i) {
      record_result(graph_->getitem(node, static_cast<int64_t>(i)), IValue(list[i]));
    }
  } else if (results == 1) {
    record_result(node, (*stack)[below]);
  } else {
    for (size_t i = 0; i < results; ++i) {
      record_result(graph_->getitem(node, static_cast<int64_t>(i)), (*stack)[below + i]);
    }
  }
}

void CaptureMode::set_output(const IValue& result) { graph_->output(arg_for(result)); }

std::shared_ptr<Graph> CaptureMode::take_graph() {
  nodes_of_.clear();
  kept_.clear();
  return std::exchange(graph_, std::make_shared<Graph>());
}

std::shared_ptr<Graph> capture(const std::vector<std::pair<std::string, IValue>>& inputs,
                               const std::function<IValue()>& program) {
  auto mode = std::make_shared<CaptureMode>();
  for (const auto& [name, value] : inputs) mode->add_input(name + "_1", value);
  IValue result;
  {
    DispatchModeGuard guard(mode);
    result = program();
  }
  mode->set_output(result);
  return mode->take_graph();
}

}  // namespace opd::fx
