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
  Library lib;
};

// Undoing registrations takes the registration mutex: never with the GIL held.
struct ReleaseGilDeleter {
  void operator()(PyLibrary* p) const {
    py::gil_scoped_release r;
    delete p;
  }
};

std::optional<DispatchKey> key_or_none(const std::string& key) {
  if (key.empty()) return std::nullopt;
  return parse_dispatch_key(key);
}

Library::Kind parse_kind(const std::string& kind) {
  if (kind == "DEF") return Library::DEF;
  if (kind == "FRAGMENT") return Library::FRAGMENT;
  if (kind == "IMPL") return Library::IMPL;
  throw ValueError("Unsupported library kind '" + kind + "': expected DEF, FRAGMENT or IMPL");
}

std::string site_text(const std::string& file, uint32_t line) {
  return file + ":" + std::to_string(line);
}

}  // namespace

void bind_library(py::module_& m) {
  py::class_<PyLibrary, std::unique_ptr<PyLibrary, ReleaseGilDeleter>>(m, "_Library",
                                                                       py::module_local())
      .def(py::init([](const std::string& kind, std::string ns, const std::string& key,
                       const std::string& file, uint32_t line) {
             Library::Kind k = parse_kind(kind);
             std::optional<DispatchKey> dk = key_or_none(key);
             py::gil_scoped_release r;
             return std::unique_ptr<PyLibrary, ReleaseGilDeleter>(
                 new PyLibrary(k, std::move(ns), dk, file, line));
           }),
           py::arg("kind"), py::arg("ns"), py::arg("dispatch_key"), py::arg("file"),
           py::arg("line"))
      .def("define",
           [](PyLibrary& l, const std::string& schema, const std::string& file, uint32_t line,
              const std::vector<Tag>& tags) {
             drain_releases();
             TagSet set;
             for (Tag t : tags) set.add(t);
             py::gil_scoped_release r;
             l.lib.def(schema, set, RegistrationSite{file, line});
           })
      .def("impl",
           [](PyLibrary& l, const std::string& name, py::object fn, const std::string& key,
              bool with_keyset, bool fallthrough, const std::string& file, uint32_t line) {
             drain_releases();
             std::optional<DispatchKey> dk = key_or_none(key);
             std::optional<DispatchKey> effective = dk ? dk : l.lib.key();
             KernelFunction k = fallthrough
                                    ? KernelFunction::make_fallthrough()
                                    : make_python_kernel(std::move(fn), effective,
                                                         site_text(file, line), with_keyset, false);
             py::gil_scoped_release r;
             l.lib.impl(name, dk, CppFunction::from_kernel(std::move(k)),
                        RegistrationSite{file, line});
           })
      .def("fallback",
           [](PyLibrary& l, py::object fn, bool with_keyset, bool fallthrough,
              const std::string& file, uint32_t line) {
             drain_releases();
             KernelFunction k = fallthrough
                                    ? KernelFunction::make_fallthrough()
                                    : make_python_kernel(std::move(fn), l.lib.key(),
                                                         site_text(file, line), with_keyset, true);
             py::gil_scoped_release r;
             l.lib.fallback(CppFunction::from_kernel(std::move(k)), RegistrationSite{file, line});
           })
      .def("reset",
           [](PyLibrary& l) {
             {
               py::gil_scoped_release r;
               l.lib.reset();
               Dispatcher::singleton().reclaim();
             }
             drain_releases();
           })
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
