// opdispatch.library's C++ half: _C._Library, an opd::Library whose registrations carry the
// Python file and line that made them, and whose kernels may be Python callables (Note [Python
// kernels] in kernel.cpp). Every registration and its undoing run without the GIL (Note [The
// GIL and the dispatcher's locks]), the destructor included.

#include "opd/library.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "gil.h"
#include "kernel.h"
#include "opd/dispatcher.h"

namespace py = pybind11;

namespace opd::python {
namespace {

// Owns the site's file name: RegistrationSite only views it.
struct PyLibrary {
  PyLibrary(Library::Kind kind, std::string ns, std::optional<DispatchKey> key,
            const std::string& file, uint32_t line)
      : lib(kind, std::move(ns), key, RegistrationSite{file, line}) {}

  // "Library('ns', 'DEF')", as the Python class's errors name it.
  std::string name() const {
    return "Library('" + lib.ns() + "', '" + to_string(lib.kind()) + "')";
  }
  // After tp_clear the registrations are gone and nothing can be added.
  void check_not_cleared() const {
    OPD_CHECK(!cleared,
              "{} was cleared by the garbage collector (it was part of a reference "
              "cycle that nothing else reached); its registrations were undone",
              name());
  }
  // Undoes every registration (without the GIL) and lets go of their functions, last.
  // REQUIRES: the GIL.
  void reset() {
    // Moved out first: dropping a function may run Python code that reaches this object.
    std::vector<std::shared_ptr<PythonCallable>> dropped = std::move(callables);
    callables.clear();
    {
      py::gil_scoped_release r;
      lib.reset();
      Dispatcher::singleton().reclaim();
    }
    dropped.clear();
    drain_releases();
  }

  Library lib;
  // The functions of the Python kernels registered since the last reset, which this object
  // reports to the collector (Note [Python kernels and the garbage collector]). Read and
  // written with the GIL held only.
  std::vector<std::shared_ptr<PythonCallable>> callables;
  bool cleared = false;
};

// The PyLibrary of a _C._Library instance; null before its __init__ made one.
PyLibrary* library_of(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  py::detail::value_and_holder v_h = inst->get_value_and_holder();
  return v_h.holder_constructed() ? v_h.template value_ptr<PyLibrary>() : nullptr;
}

// Note [Python kernels and the garbage collector] (kernel.h): _C._Library's slots. None takes
// a lock: traverse reads `callables` (the GIL guards it); finalize (and clear, for an object
// already finalized) undoes the registrations as reset() does, without the GIL, as every
// registration is undone.
int library_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));  // a heap type's instances own a reference to it
  if (PyLibrary* l = library_of(self)) {
    for (const auto& c : l->callables) Py_VISIT(c->get());
  }
  return 0;
}

int library_clear(PyObject* self) {
  PyLibrary* l = library_of(self);
  if (l == nullptr || l->cleared) return 0;
  l->cleared = true;
  try {
    l->reset();
  } catch (...) {
    // Undoing registrations does not fail; nothing else here throws but allocation.
    PyErr_WriteUnraisable(self);
  }
  return 0;
}

// Runs before the collector clears any object of the garbage, so that it clears none of the
// functions that calls on their way still hold (Note [Python kernels and the garbage
// collector]). Keeps the current exception, as tp_finalize must.
void library_finalize(PyObject* self) {
  PyLibrary* l = library_of(self);
  if (l == nullptr || l->cleared) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  library_clear(self);
  PyErr_Restore(type, value, traceback);
}

// pybind11 2.10's dealloc leaves a collected type's instances tracked while their holder is
// destroyed, and ours releases the GIL there: another thread's collection would traverse a
// PyLibrary being deleted. Untracked first, as CPython's own types do.
void library_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  py::detail::pybind11_object_dealloc(self);
}

std::optional<DispatchKey> key_or_none(const std::string& key) {
  if (key.empty()) return std::nullopt;
  return parse_dispatch_key(key);
}

Library::Kind parse_kind(const std::string& kind) {
  std::optional<Library::Kind> k = library_kind(kind);
  if (!k) {
    throw ValueError("Unsupported library kind '" + kind + "': expected DEF, FRAGMENT or IMPL");
  }
  return *k;
}

std::string site_text(const std::string& file, uint32_t line) {
  return file + ":" + std::to_string(line);
}

}  // namespace

std::optional<Library::Kind> library_kind(const std::string& kind) {
  if (kind == "DEF") return Library::DEF;
  if (kind == "FRAGMENT") return Library::FRAGMENT;
  if (kind == "IMPL") return Library::IMPL;
  return std::nullopt;
}

void check_callable(py::handle fn) {
  OPD_CHECK_T(TypeError, PyCallable_Check(fn.ptr()),
              "Input function is required to be a callable but found type {}",
              py::str(py::type::handle_of(fn)).cast<std::string>());
}

void bind_library(py::module_& m) {
  py::class_<PyLibrary, std::unique_ptr<PyLibrary, ReleaseGilDeleter<PyLibrary>>>(
      m, "_Library", py::module_local(), py::custom_type_setup([](PyHeapTypeObject* heap) {
        PyTypeObject* type = &heap->ht_type;
        type->tp_flags |= Py_TPFLAGS_HAVE_GC;
        type->tp_traverse = &library_traverse;
        type->tp_clear = &library_clear;
        type->tp_finalize = &library_finalize;
        type->tp_dealloc = &library_dealloc;
      }))
      .def(py::init([](const std::string& kind, std::string ns, const std::string& key,
                       const std::string& file, uint32_t line) {
             Library::Kind k = parse_kind(kind);
             std::optional<DispatchKey> dk = key_or_none(key);
             py::gil_scoped_release r;
             return std::unique_ptr<PyLibrary, ReleaseGilDeleter<PyLibrary>>(
                 new PyLibrary(k, std::move(ns), dk, file, line));
           }),
           py::arg("kind"), py::arg("ns"), py::arg("dispatch_key"), py::arg("file"),
           py::arg("line"))
      .def(
          "define",
          [](PyLibrary& l, const std::string& schema, const std::string& file, uint32_t line,
             const std::vector<Tag>& tags, const std::string& alias_analysis) {
            drain_releases();
            l.check_not_cleared();
            AliasAnalysisKind kind = parse_alias_analysis_as_torch(alias_analysis);
            TagSet set;
            for (Tag t : tags) set.add(t);
            py::gil_scoped_release r;
            l.lib.def(schema, kind, set, RegistrationSite{file, line});
          },
          py::arg("schema"), py::arg("file"), py::arg("line"), py::arg("tags"),
          py::arg("alias_analysis") = "")
      .def("impl",
           [](PyLibrary& l, const std::string& name, py::object fn, const std::string& key,
              bool with_keyset, bool fallthrough, const std::string& file, uint32_t line) {
             drain_releases();
             l.check_not_cleared();
             std::optional<DispatchKey> dk = key_or_none(key);
             std::optional<DispatchKey> effective = dk ? dk : l.lib.key();
             PythonKernel k;
             if (fallthrough) {
               k.kernel = KernelFunction::make_fallthrough();
             } else {
               check_callable(fn);
               k = make_python_kernel(std::move(fn), effective, site_text(file, line), with_keyset,
                                      false);
             }
             {
               py::gil_scoped_release r;
               l.lib.impl(name, dk, CppFunction::from_kernel(std::move(k.kernel)),
                          RegistrationSite{file, line});
             }
             if (k.callable) l.callables.push_back(std::move(k.callable));
           })
      .def("fallback",
           [](PyLibrary& l, py::object fn, bool with_keyset, bool fallthrough,
              const std::string& file, uint32_t line) {
             drain_releases();
             l.check_not_cleared();
             PythonKernel k;
             if (fallthrough) {
               k.kernel = KernelFunction::make_fallthrough();
             } else {
               check_callable(fn);
               k = make_python_kernel(std::move(fn), l.lib.key(), site_text(file, line),
                                      with_keyset, true);
             }
             {
               py::gil_scoped_release r;
               l.lib.fallback(CppFunction::from_kernel(std::move(k.kernel)),
                              RegistrationSite{file, line});
             }
             if (k.callable) l.callables.push_back(std::move(k.callable));
           })
      .def("reset", [](PyLibrary& l) { l.reset(); })
      .def_property_readonly("registration_count",
                             [](const PyLibrary& l) { return l.lib.registration_count(); });

  m.def(
      "_begin_shutdown",
      [](int timeout_ms) {
        remove_warning_handler();
        return begin_shutdown(timeout_ms);
      },
      py::arg("timeout_ms") = 2000);
  m.def("_drain_releases", &drain_releases);
  m.def("_reclaim", [] {
    size_t n;
    {
      py::gil_scoped_release r;
      n = Dispatcher::singleton().reclaim();
    }
    drain_releases();
    return n;
  });
}

}  // namespace opd::python
