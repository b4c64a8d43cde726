// opdispatch._C: the Python package's one extension module. Each bind_* lives in the file named
// for what it binds.
//
// Note [The GIL and the dispatcher's locks]
// Every binding that enters the dispatcher, the plugin manager or registration releases the GIL
// first (py::call_guard<py::gil_scoped_release>), and converts its results after taking it back.
// So a thread holding one of the core's mutexes never waits for the GIL held by a thread that
// waits for that mutex: C++ never waits for the GIL except to run Python code, and no Python
// code runs while the core's mutexes are held by the same call.

#include <pybind11/pybind11.h>

#include "bindings.h"
#include "opd/error.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "opdispatch's C++ core: the dispatcher, its introspection and the plugin manager";
  // opd::Error and its kinds raise what PyTorch raises for them; the message is opdispatch's.
  // opdispatch.PluginError, a RuntimeError. Never destroyed: it would outlive the interpreter.
  static auto* plugin_error =
      new py::exception<opd::PluginError>(m, "PluginError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const opd::PluginError& e) {
      PyErr_SetString(plugin_error->ptr(), e.msg().c_str());
    } catch (const opd::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.msg().c_str());
    } catch (const opd::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.msg().c_str());
    } catch (const opd::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.msg().c_str());
    } catch (const opd::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.msg().c_str());
    } catch (const opd::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.msg().c_str());
    }
  });
  opd::python::bind_plugins(m);
  opd::python::bind_introspection(m);
}
