#pragma once

// Calling operators from Python by their schemas (ops.cpp): what opdispatch.ops' packets and
// overloads, the schema-bound Tensor methods and the module-level functions share.

#include <pybind11/pybind11.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opd/dispatcher.h"

namespace opd::python {

// The Python arguments of one call, borrowed, as either calling convention passes them:
// vectorcall's array (keyword values after the positional ones, named by `kwnames`) or tp_call's
// tuple and dict. A method call made by the method-call opcodes (Note [Tensor methods]) needs
// no tuple made for it.
struct PythonArgs {
  PyObject* const* positional = nullptr;
  Py_ssize_t size = 0;          // of positional
  PyObject* kwnames = nullptr;  // vectorcall: a tuple of str, or null
  PyObject* kwargs = nullptr;   // tp_call: a dict, or null
  static PythonArgs of_tuple(pybind11::handle args, pybind11::handle kwargs) {
    return {&PyTuple_GET_ITEM(args.ptr(), 0), PyTuple_GET_SIZE(args.ptr()), nullptr, kwargs.ptr()};
  }
  // The value passed for keyword `name`; null when none was.
  PyObject* keyword(const std::string& name) const;
};

// Converts the Python arguments, binds them as opd eval does (bind::bind_to_overloads over
// `candidates`, `name` in errors), calls the chosen overload boxed without the GIL (or
// redispatches it to `keys`), and converts its results (see call_result). `self_bound`: a
// Tensor method call, the first positional argument being the tensor
// (bind::CallArgs::self_bound).
pybind11::object call_overloads(std::span<const OperatorHandle> candidates, std::string_view name,
                                const PythonArgs& args,
                                std::optional<DispatchKeySet> keys = std::nullopt,
                                bool self_bound = false);

}  // namespace opd::python
