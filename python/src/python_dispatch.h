#pragma once

// Python dispatch: TorchDispatchMode objects on the core's mode stack (python_dispatch.cpp) and
// tensor subclasses with __torch_dispatch__ (python_dispatch_subclass.cpp). See Note [Python
// dispatch modes] and Note [Wrapper subclasses].

#include <pybind11/pybind11.h>

#include "opd/boxing.h"
#include "opd/operator_handle.h"
#include "opd/tensor.h"

namespace opd::python {

// _push_mode's C++ side and the rest of the mode stack's bindings, and the subclass bindings.
void bind_python_dispatch(pybind11::module_& m);
void bind_python_dispatch_subclass(pybind11::module_& m);

// Calls __torch_dispatch__ for the operator whose arguments are on `stack`: the mode's method
// when `mode` is given, else each overloaded type's classmethod in turn until one returns
// something other than NotImplemented. Converts the arguments to (args, kwargs) as torch does
// (Note [Python dispatch modes]) and the result by the schema's returns; replaces the arguments
// with the results. Takes the GIL for the Python part only. A Python exception leaves as
// PythonKernelError (raised again as itself at the outer binding). Without a mode and without a
// subclass instance among the arguments, returns false and leaves the stack as it was.
bool call_torch_dispatch(const OperatorHandle& op, Stack* stack, pybind11::handle mode);

// The Python object of a wrapper subclass tensor (a tensor with the Python key made by
// Tensor._make_wrapper_subclass): the live instance, or a new one of its class sharing its
// __dict__ once the first is gone; a null object for any other tensor. REQUIRES: the GIL.
pybind11::object subclass_object(const Tensor& t);

// A wrapper subclass has no memory to read: Tensor.tolist(), repr(), numpy() and __dlpack__
// refuse it with torch's RuntimeError ".tolist() is not supported for tensor subclasses." (`what`
// is ".tolist()"), as torch's do, where they would read through a null pointer.
void check_not_wrapper_subclass(const Tensor& t, const char* what);

}  // namespace opd::python
