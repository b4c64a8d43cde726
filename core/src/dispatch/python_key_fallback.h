#pragma once

// The Python key's fallback, which the Dispatcher registers for every operator when it is
// created (dispatch_mode.cpp; Note [Dispatch modes]).

#include "opd/boxing.h"
#include "opd/dispatch_key_set.h"
#include "opd/kernel_function.h"
#include "opd/operator_handle.h"

namespace opd::detail {

// The top dispatch mode, popped while it runs; else the tensor subclass handler; else the
// operator below the Python key.
void python_key_fallback(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet keys,
                         Stack* stack);

}  // namespace opd::detail
