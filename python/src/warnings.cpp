// opd::warn from any C++ code reaches Python as UserWarning.

#include <Python.h>

#include <cstdio>
#include <string>

#include "bindings.h"
#include "gil.h"
#include "kernel.h"
#include "opd/warning.h"

namespace opd::python {
namespace {

// A warning filter set to "error" makes PyErr_WarnEx fail: the exception then leaves
// opd::warn and reaches the Python caller as itself (PythonKernelError carries it), as torch's
// warnings-as-errors do. During interpreter shutdown the warning goes to stderr instead.
void warn_in_python(std::string_view message) {
  const std::string text(message);
  try {
    CallbackGil gil("a warning");
    if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) < 0) {
      throw PythonKernelError(text, pybind11::error_already_set());
    }
  } catch (const PythonKernelError&) {
    throw;
  } catch (const Error&) {
    std::fprintf(stderr, "UserWarning: %s\n", text.c_str());
  }
}

}  // namespace

void install_warning_handler() { set_warning_handler(&warn_in_python); }
void remove_warning_handler() { set_warning_handler(nullptr); }

}  // namespace opd::python
