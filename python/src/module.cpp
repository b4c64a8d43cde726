// opdispatch._C: the Python package's one extension module. Each bind_* lives in the file named
// for what it binds.
//
// Note [The GIL and the dispatcher's locks]
// No thread may hold the GIL while it waits for one of the core's locks, and no thread holding
// one of them may wait for the GIL. The first half is a rule for the bindings: every call into
// the dispatcher, the plugin manager or registration (and every operator call) is made inside
// py::gil_scoped_release, converting arguments before and results after. The second half holds
// because C++ takes the GIL only to run a Python kernel (Note [Python kernels]) and drops Python
// references without waiting (Note [Python lifetime]). One path breaks it: a host's registration
// listener may call an operator whose kernel is Python, under the registration mutex. So
// lookups (find_schema, all_op_names, which take that mutex) are made without the GIL too, the
// operator caches' included (Note [Operator handles from Python] in ops.cpp).

#include <pybind11/pybind11.h>

#include "bindings.h"
#include "kernel.h"
#include "opd/error.h"
#include "opd/function_schema.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "opdispatch's C++ core: the dispatcher, tensors, operators, registration and plugins";
  // opdispatch.PluginError, a RuntimeError, and SchemaParseError, a RuntimeError (as
  // torch._C.parse_schema raises). Never destroyed: they would outlive the interpreter.
  static auto* plugin_error =
      new py::exception<opd::PluginError>(m, "PluginError", PyExc_RuntimeError);
  static auto* schema_error =
      new py::exception<opd::SchemaParseError>(m, "SchemaParseError", PyExc_RuntimeError);
  // Module-local: torch's _C shares pybind11's internals with this module, so a global
  // translator would see torch's exceptions and torch's would see ours. opd::Error and its
  // kinds raise what PyTorch raises for them, with opdispatch's message; an exception a Python
  // kernel raised is raised again as itself.
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (opd::python::PythonKernelError& e) {
      e.error().restore();
    } catch (const opd::PluginError& e) {
      PyErr_SetString(plugin_error->ptr(), e.msg().c_str());
    } catch (const opd::SchemaParseError& e) {
      PyErr_SetString(schema_error->ptr(), e.msg().c_str());
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
  opd::python::bind_types(m);
  opd::python::bind_tensor(m);
  opd::python::bind_generator(m);
  opd::python::bind_numpy(m);
  opd::python::bind_dlpack(m);
  opd::python::bind_ops(m);
  opd::python::bind_library(m);
  opd::python::bind_autograd(m);
  opd::python::bind_autograd_function(m);
  opd::python::bind_trace(m);
  opd::python::bind_fx(m);
  opd::python::bind_testing(m);
  opd::python::bind_dispatch_library(m);
  opd::python::bind_plugins(m);
  opd::python::bind_introspection(m);
  opd::python::bind_python_dispatch(m);
  opd::python::install_warning_handler();
}
