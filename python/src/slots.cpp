// Exceptions out of C++ type slots (Note [Type slots] in slots.h): the order pybind11's function
// dispatcher applies the translators in, module-local ones (module.cpp's) first.

#include "slots.h"

namespace py = pybind11;

namespace opd::python {

PyObject* raise_current_exception() noexcept {
  try {
    if (py::detail::apply_exception_translators(
            py::detail::get_local_internals().registered_exception_translators)) {
      return nullptr;
    }
    if (py::detail::apply_exception_translators(
            py::detail::get_internals().registered_exception_translators)) {
      return nullptr;
    }
  } catch (...) {
    // A translator's own failure: reported below.
  }
  PyErr_SetString(PyExc_SystemError, "opdispatch: an exception escaped every exception translator");
  return nullptr;
}

}  // namespace opd::python
