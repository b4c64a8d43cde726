#include "opd/dispatch_mode.h"

#include <atomic>
#include <utility>
#include <vector>

#include "dispatch/python_key_fallback.h"
#include "opd/error.h"
#include "opd/local_dispatch_key_set.h"

namespace opd {

// Note [Dispatch modes]
// A dispatch mode sees every operator call its thread makes below the layers above the Python
// key (Autograd, ADInplaceOrView, Functionalize), as PyTorch's TorchDispatchMode does: the
// autograd kernel has recorded the call and redispatched, so a mode sees what a backend would.
// The modes are a stack per thread (thread_local: a mode on one thread never sees another's
// calls). Pushing the first mode adds kPythonKeySet (Python | PythonTLSSnapshot) to the thread's
// included keys, popping the last removes what the first added, as c10's TorchDispatchModeTLS
// does; with no mode and no subclass tensor, the Python key is in no call's key set and costs
// nothing.
//
// The core registers the Python key's fallback for every operator (PyTorch's pythonFallback,
// python_key_fallback below): it pops the top mode for the duration of the mode's dispatch, so
// that what the mode calls reaches the next mode (its key is still included) or, from the last
// mode, runs with the Python key gone from the thread's keys; the mode is pushed back when its
// dispatch returns or throws, so an exception leaves the stack as it was. With no mode, a call
// that reached the Python key carries a tensor subclass (a tensor whose key set holds
// kPythonKeySet): the subclass handler the Python package set runs it (its __torch_dispatch__).
// With neither, the call goes on below the Python key.
//
// PythonTLSSnapshot is a fallthrough the core registers. In PyTorch it is the highest key, and
// its fallback stashes the thread's dispatch state on entry so that pythonFallback can restore
// the Python state the layers in between (autograd's guards) may have changed. Here the mode
// stack is C++ TLS that no layer below changes, and the included/excluded keys a mode's calls
// run with are the ones the layers above set (the autograd kernel's exclusion of the autograd
// keys holds while the mode runs, so the mode's own calls are not recorded again), so there is
// nothing to snapshot: the key only keeps PyTorch's layout and key sets.

DispatchMode::~DispatchMode() = default;

namespace {

// This thread's modes, bottom first.
thread_local std::vector<std::shared_ptr<DispatchMode>> t_modes;

// The subclass handler; read on the Python key's slow path only.
std::atomic<std::shared_ptr<const PythonSubclassHandler>> g_subclass_handler;

// The Python keys the first push added to the thread's included keys (those it found already
// included, by an IncludeDispatchKeyGuard, stay when the last mode goes).
thread_local DispatchKeySet t_added_keys;

void set_python_keys_included(bool included) {
  if (included) {
    t_added_keys = kPythonKeySet - tls_local_dispatch_key_set().included;
    for (DispatchKey k : t_added_keys) tls_set_dispatch_key_included(k, true);
  } else {
    for (DispatchKey k : t_added_keys) tls_set_dispatch_key_included(k, false);
    t_added_keys = DispatchKeySet();
  }
}

}  // namespace

void push_dispatch_mode(std::shared_ptr<DispatchMode> mode) {
  OPD_CHECK(mode != nullptr, "push_dispatch_mode: the mode is null");
  t_modes.push_back(std::move(mode));
  if (t_modes.size() == 1) set_python_keys_included(true);
}

std::shared_ptr<DispatchMode> pop_dispatch_mode() {
  OPD_CHECK(!t_modes.empty(), "trying to pop from empty mode stack");
  std::shared_ptr<DispatchMode> mode = std::move(t_modes.back());
  t_modes.pop_back();
  if (t_modes.empty()) set_python_keys_included(false);
  return mode;
}

size_t dispatch_mode_stack_len() { return t_modes.size(); }

std::shared_ptr<DispatchMode> current_dispatch_mode() {
  return t_modes.empty() ? nullptr : t_modes.back();
}

std::shared_ptr<DispatchMode> dispatch_mode_at(size_t index) {
  OPD_CHECK_T(IndexError, index < t_modes.size(),
              "dispatch_mode_at: index {} is out of range for a mode stack of {}", index,
              t_modes.size());
  return t_modes[index];
}

void redispatch_below_python(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  op.redispatch_boxed(keys & keys_below(DispatchKey::Python), stack);
}

RegistrationHandle set_python_subclass_handler(PythonSubclassHandler handler) {
  OPD_CHECK(handler != nullptr, "set_python_subclass_handler: the handler is empty");
  auto ours = std::make_shared<const PythonSubclassHandler>(std::move(handler));
  std::shared_ptr<const PythonSubclassHandler> none;
  OPD_CHECK(g_subclass_handler.compare_exchange_strong(none, ours),
            "set_python_subclass_handler: a handler of tensor subclasses is already set; one at "
            "a time");
  return RegistrationHandle([raw = ours.get()] {
    auto expected = g_subclass_handler.load();
    if (expected.get() == raw) g_subclass_handler.compare_exchange_strong(expected, nullptr);
  });
}

namespace detail {

void python_key_fallback(OperatorKernel*, const OperatorHandle& op, DispatchKeySet keys,
                         Stack* stack) {
  if (!t_modes.empty()) {
    // Pushed back however dispatch leaves: the stack's capacity is kept by the pop, so the push
    // in the destructor does not allocate.
    struct PushBack {
      std::shared_ptr<DispatchMode> mode;
      ~PushBack() { push_dispatch_mode(std::move(mode)); }
    } popped{pop_dispatch_mode()};
    popped.mode->dispatch(op, keys, stack);
    return;
  }
  if (auto handler = g_subclass_handler.load()) {
    (*handler)(op, keys, stack);
    return;
  }
  redispatch_below_python(op, keys, stack);
}

}  // namespace detail

}  // namespace opd
