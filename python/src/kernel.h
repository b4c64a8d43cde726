#pragma once

// Python callables as boxed kernels (kernel.cpp): Note [Python kernels].

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opd/error.h"
#include "opd/function_schema.h"
#include "opd/ivalue.h"
#include "opd/kernel_function.h"

namespace opd::python {

// A Python exception raised in a Python kernel, on its way through C++. msg() is what a C++
// caller sees ("myops::scale: the Python kernel for CPU (registered at t.py:12) raised
// ValueError: bad"); at the outer binding the original exception is raised again (module.cpp).
class PythonKernelError : public Error {
 public:
  PythonKernelError(std::string msg, pybind11::error_already_set error)
      : Error(std::move(msg)), error_(std::move(error)) {}
  ~PythonKernelError() override;
  pybind11::error_already_set& error() { return error_; }

 private:
  pybind11::error_already_set error_;
};

// "ValueError: bad input": the exception's type and str(). Not error_already_set::what(),
// which pybind11 2.10 formats with a traceback and, when formatting fails (at the recursion
// limit), retries without end. REQUIRES: the GIL.
std::string python_error_text(const pybind11::error_already_set& e);

// `result`, what a Python function returned for an operator, as the schema's results: None for
// none, else one value or a tuple/list of them, each converted as opd eval converts an argument
// of that type (bind::convert_argument). TypeError naming `what()` when it does not fit.
// REQUIRES: the GIL.
std::vector<IValue> results_from_python(const FunctionSchema& schema,
                                        const std::function<std::string()>& what,
                                        pybind11::handle result);

// Note [Python kernels and the garbage collector]
// A Python kernel's function often refers to the Library that registered it (a default
// argument, a closure, a method of an object holding the Library), and that Library owns the
// kernel through the dispatcher: a cycle through C++, which the collector sees only if the
// objects that own kernels report them. So the function is a PythonCallable, co-owned by the
// kernel and by the _C._Library that registered it, and that type has tp_traverse (visiting
// the functions of its live registrations) and tp_finalize (undoing them), as library.cpp sets
// up. The kernel's share keeps a call that is already on its way (dispatch takes no lock, Note
// [Kernel reclamation]) running the old function after the registration is undone, as any
// deregistration would; the function goes when the last share does.
// The undo must happen in tp_finalize, not tp_clear. CPython runs the finalizers of all the
// garbage before it clears any of it (PEP 442), then moves back what a finalizer made reachable
// again: once the registrations are undone, the library no longer reports the functions, so one
// that a call on its way still holds counts as referenced from outside and is not cleared. Were
// the undo left to tp_clear, the collector could clear the function (func_clear drops its
// globals and closure) while a call that already took the kernel waits for the GIL to run it.

// A strong reference to a Python object, held by C++ owners that may be destroyed on any
// thread (released through release_pyobject, Note [Python lifetime]). Only read with the GIL.
class PythonCallable {
 public:
  explicit PythonCallable(pybind11::object fn) : fn_(fn.release().ptr()) {}
  ~PythonCallable();
  PythonCallable(const PythonCallable&) = delete;
  PythonCallable& operator=(const PythonCallable&) = delete;

  // Borrowed. REQUIRES: the GIL.
  PyObject* get() const { return fn_; }
  // tp_traverse of an owner. REQUIRES: the GIL (the collector holds it).
  int traverse(visitproc visit, void* arg) const { return fn_ ? visit(fn_, arg) : 0; }

 private:
  PyObject* fn_;
};

// A Python kernel and its function, which the Library that registers it keeps too.
struct PythonKernel {
  KernelFunction kernel;
  std::shared_ptr<PythonCallable> callable;
};

// `fn` as a kernel for `key` (nullopt: CompositeImplicitAutograd). `site` is the registration
// site ("t.py:12"); `with_keyset` passes the DispatchKeySet first; `fallback` passes the
// operator (an opdispatch OpOverload) first, for backend fallbacks.
PythonKernel make_python_kernel(pybind11::object fn, std::optional<DispatchKey> key,
                                std::string site, bool with_keyset, bool fallback);

}  // namespace opd::python
