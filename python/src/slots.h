#pragma once

// CPython type slots written in C++ (slots.cpp). See Note [Type slots].

#include <pybind11/pybind11.h>

#include <utility>

namespace opd::python {

// Note [Type slots]
// `x + y` and `op(x, y)` on small tensors are mostly call overhead. Bound as pybind11 methods,
// __add__ and __call__ would make each call look the method up (CPython's slot_nb_add and
// slot_tp_call), build an argument tuple, and go through pybind11's function dispatcher (its
// argument vectors and overload loop). So the hot ones are the type's slots themselves
// (nb_add, tp_call...), set before PyType_Ready with py::custom_type_setup; PyType_Ready then
// makes the __add__/__radd__/__call__ descriptors from them, which Python subclasses inherit.
// A slot catches every C++ exception and raises it as pybind11's dispatcher would, with the
// module's translators first (raise_current_exception).

// Raises the exception being handled as a Python error, through the module's exception
// translators and then pybind11's; returns nullptr, a slot's error result. Only inside a catch
// block.
PyObject* raise_current_exception() noexcept;

// A slot's body: `body()` returns a py::object, whose reference the slot returns; an exception
// becomes the Python error.
template <class Body>
PyObject* slot_call(Body&& body) noexcept {
  try {
    return std::forward<Body>(body)().release().ptr();
  } catch (...) {
    return raise_current_exception();
  }
}

}  // namespace opd::python
