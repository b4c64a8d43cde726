#pragma once

// Dispatch modes: objects that intercept every operator call of a thread at the Python key, as
// PyTorch's TorchDispatchMode (the Python package's modes are one kind; a C++ mode such as the
// graph capture needs no Python). The Python key's fallback, registered by the core, runs the
// top mode, else the handler of tensor subclasses, else the operator below the Python key. See
// Note [Dispatch modes] in core/src/dispatch/dispatch_mode.cpp.

#include <cstddef>
#include <functional>
#include <memory>

#include "opd/boxing.h"
#include "opd/dispatch_key_set.h"
#include "opd/export.h"
#include "opd/operator_handle.h"
#include "opd/registration_handle.h"

namespace opd {

class OPD_API DispatchMode {
 public:
  virtual ~DispatchMode();
  // Runs with this mode popped off the thread's stack: calls it makes reach the next mode, or
  // below the Python key when none. Leaves the results on `stack` (as a boxed kernel does).
  virtual void dispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) = 0;
};

// This thread's mode stack. While it is non-empty the thread's included keys hold kPythonKeySet,
// so every call reaches the Python key's fallback.
OPD_API void push_dispatch_mode(std::shared_ptr<DispatchMode> mode);
// Removes and returns the top mode. Throws Error on an empty stack.
OPD_API std::shared_ptr<DispatchMode> pop_dispatch_mode();
OPD_API size_t dispatch_mode_stack_len();
// The top mode; null when the stack is empty.
OPD_API std::shared_ptr<DispatchMode> current_dispatch_mode();
// The mode at `index` from the bottom (0 is the first pushed). Throws IndexError past the top.
OPD_API std::shared_ptr<DispatchMode> dispatch_mode_at(size_t index);

// Pushes `mode` for the scope; pops it at exit. Use on one thread.
class DispatchModeGuard {
 public:
  explicit DispatchModeGuard(std::shared_ptr<DispatchMode> mode) {
    push_dispatch_mode(std::move(mode));
  }
  ~DispatchModeGuard() { pop_dispatch_mode(); }
  DispatchModeGuard(const DispatchModeGuard&) = delete;
  DispatchModeGuard& operator=(const DispatchModeGuard&) = delete;
};

// Runs `op` on the keys below the Python key (the backends): what a mode or a subclass handler
// calls to compute an operator without being called again. `keys` is what the fallback received.
OPD_API void redispatch_below_python(const OperatorHandle& op, DispatchKeySet keys, Stack* stack);

// The handler of tensor subclasses (the Python package's __torch_dispatch__ on a tensor's class):
// what the Python key's fallback calls when no mode is active. One at a time: setting a second
// throws Error; destroying or resetting the handle removes it. The handler may run on any thread
// that dispatches, concurrently; a call already in it when it is removed finishes with it.
using PythonSubclassHandler =
    std::function<void(const OperatorHandle& op, DispatchKeySet keys, Stack* stack)>;
OPD_API RegistrationHandle set_python_subclass_handler(PythonSubclassHandler handler);

}  // namespace opd
