#pragma once

// Python callables as boxed kernels (kernel.cpp): Note [Python kernels].

#include <pybind11/pybind11.h>

#include <string>

#include "opd/error.h"
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

// `fn` as a kernel for `key` (nullopt: CompositeImplicitAutograd). `site` is the registration
// site ("t.py:12"); `with_keyset` passes the DispatchKeySet first; `fallback` passes the
// operator (an opdispatch OpOverload) first, for backend fallbacks.
KernelFunction make_python_kernel(pybind11::object fn, std::optional<DispatchKey> key,
                                  std::string site, bool with_keyset, bool fallback);

}  // namespace opd::python
