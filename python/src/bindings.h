#pragma once

// The parts of opdispatch._C (module.cpp calls each).

#include <pybind11/pybind11.h>

namespace opd::python {

// opdispatch.plugins: the plugin manager (plugins.cpp).
void bind_plugins(pybind11::module_& m);
// torch._C's _dispatch_* introspection functions, with torch's names (introspection.cpp).
void bind_introspection(pybind11::module_& m);

}  // namespace opd::python
