// torch._C's testing handle on the registration API, with torch 1.13's names:
// _C._dispatch_library(kind, name, dispatch, file="/dev/null", linenum=0) makes a
// _C._DispatchModule, an opd::Library whose methods register C++ test kernels (an identity
// Tensor -> Tensor, unboxed, whose schema is inferred from its signature), fallthroughs and
// Python functions. Tests build any registration state with it and read it back through
// _dispatch_dump and _dispatch_dump_table, as PyTorch's test_dispatch.py does; PythonDispatcher
// (opdispatch/_python_dispatcher.py) registers through it. Dropping the handle undoes its
// registrations, newest first. Each method either registers everything it was asked to or
// nothing. Registering and undoing run without the GIL (Note [The GIL and the dispatcher's
// locks] in module.cpp). The handle does not report its Python kernels to the garbage collector:
// a kernel that refers to its own handle keeps both alive (torch's handle does the same).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "bindings.h"
#include "gil.h"
#include "kernel.h"
#include "opd/dispatcher.h"
#include "opd/library.h"

namespace py = pybind11;

namespace opd::python {
namespace {

// The test kernels: `impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]` in dumps.
Tensor identity(const Tensor& a) { return a; }
Tensor first_of_two(const Tensor& a, const Tensor&) { return a; }

// Owns the site's file name: RegistrationSite only views it. `file` is declared first so that
// it outlives the library's construction.
struct DispatchModule {
  DispatchModule(Library::Kind kind, std::string ns, std::optional<DispatchKey> key,
                 std::string file_name, uint32_t line_number)
      : file(std::move(file_name)), line(line_number), lib(kind, std::move(ns), key, site()) {}
  RegistrationSite site() const { return {file, line}; }

  // Registers `f` for `name` on `key` (the library's key, or CompositeImplicitAutograd, when
  // none), named `debug` in dumps; an empty debug names the handle's site, as torch's.
  void impl(const std::string& name, std::optional<DispatchKey> key, CppFunction f,
            const std::string& debug) {
    if (debug.empty()) {
      lib.impl(name, key, std::move(f), site());
    } else {
      lib.impl(name, key, std::move(f), RegistrationDebug{debug});
    }
  }
  // Defines `schema` and registers `f` for it, both or neither.
  void def_with_kernel(const std::string& schema, std::optional<AliasAnalysisKind> alias,
                       std::optional<DispatchKey> key, CppFunction f, const std::string& debug) {
    std::string name = parse_schema(schema).operator_name().to_string();
    const size_t before = lib.registration_count();
    lib.def(schema, alias, TagSet(), site());
    try {
      impl(name, key, std::move(f), debug);
    } catch (...) {
      lib.reset_to(before);
      throw;
    }
  }

  std::string file;
  uint32_t line;
  Library lib;
};

using Holder = std::unique_ptr<DispatchModule, ReleaseGilDeleter<DispatchModule>>;

// torch's parse errors start "could not parse"; ours go on to say what would have parsed.
Library::Kind parse_kind(const std::string& kind) {
  std::optional<Library::Kind> k = library_kind(kind);
  if (!k) throw Error("could not parse " + kind + "; the library kinds are DEF, FRAGMENT and IMPL");
  return *k;
}

// "" is no key: the library's, or CompositeImplicitAutograd.
std::optional<DispatchKey> key_or_none(const std::string& key) {
  if (key.empty()) return std::nullopt;
  return parse_dispatch_key_as_torch(key);
}

DispatchModule& module_of(const py::object& self) { return self.cast<DispatchModule&>(); }

// impl_t_t and impl_tt_t: the C++ kernel `Kernel` for `name`, named by `debug`.
template <auto* Kernel>
py::object impl_cpp(py::object self, const std::string& name, const std::string& dispatch,
                    const std::string& debug) {
  DispatchModule& d = module_of(self);
  std::optional<DispatchKey> key = key_or_none(dispatch);
  drain_releases();
  {
    py::gil_scoped_release r;
    d.impl(name, key, CppFunction(Kernel), debug);
  }
  return self;
}

}  // namespace

// "" is FROM_SCHEMA, as torch's parseAliasAnalysisKind.
AliasAnalysisKind parse_alias_analysis_as_torch(const std::string& alias) {
  if (alias.empty()) return AliasAnalysisKind::FROM_SCHEMA;
  auto k = alias_analysis_kind_from_name(alias);
  OPD_CHECK(k.has_value(),
            "could not parse {}; the alias analysis kinds are CONSERVATIVE, FROM_SCHEMA and "
            "PURE_FUNCTION (\"\" for FROM_SCHEMA)",
            alias);
  return *k;
}

void bind_dispatch_library(py::module_& m) {
  py::class_<DispatchModule, Holder>(m, "_DispatchModule", py::module_local())
      .def(
          "def_",
          [](py::object self, const std::string& schema, const std::string& alias) {
            DispatchModule& d = module_of(self);
            AliasAnalysisKind kind = parse_alias_analysis_as_torch(alias);
            drain_releases();
            {
              py::gil_scoped_release r;
              d.lib.def(schema, kind, TagSet(), d.site());
            }
            return self;
          },
          py::arg("schema"), py::arg("alias") = "")
      .def(
          "def_legacy",
          [](py::object self, const std::string& schema) {
            DispatchModule& d = module_of(self);
            drain_releases();
            {
              py::gil_scoped_release r;
              d.lib.def(schema, std::nullopt, TagSet(), d.site());
            }
            return self;
          },
          py::arg("schema"))
      .def(
          "define",
          [](py::object self, const std::string& schema, const std::string& alias_analysis) {
            DispatchModule& d = module_of(self);
            AliasAnalysisKind kind = parse_alias_analysis_as_torch(alias_analysis);
            drain_releases();
            std::string name;
            {
              py::gil_scoped_release r;
              name = parse_schema(schema).name();
              d.lib.def(schema, kind, TagSet(), d.site());
            }
            return name;
          },
          py::arg("schema"), py::arg("alias_analysis") = "")
      .def(
          "def_name_t_t",
          [](py::object self, const std::string& name, const std::string& dispatch,
             const std::string& debug) {
            DispatchModule& d = module_of(self);
            std::optional<DispatchKey> key = key_or_none(dispatch);
            drain_releases();
            {
              py::gil_scoped_release r;
              // def(name, kernel): the schema inferred from the kernel, CONSERVATIVE.
              CppFunction f(&identity);
              std::string schema = name + std::string(*f.inferred_schema());
              d.def_with_kernel(schema, AliasAnalysisKind::CONSERVATIVE, key, std::move(f), debug);
            }
            return self;
          },
          py::arg("name"), py::arg("dispatch") = "", py::arg("debug") = "default_def_name_t_t")
      .def(
          "def_schema_t_t",
          [](py::object self, const std::string& schema, const std::string& dispatch,
             const std::string& alias, const std::string& debug) {
            DispatchModule& d = module_of(self);
            std::optional<DispatchKey> key = key_or_none(dispatch);
            AliasAnalysisKind kind = parse_alias_analysis_as_torch(alias);
            drain_releases();
            {
              py::gil_scoped_release r;
              d.def_with_kernel(schema, kind, key, CppFunction(&identity), debug);
            }
            return self;
          },
          // torch names the schema argument "name".
          py::arg("name"), py::arg("dispatch") = "", py::arg("alias") = "",
          py::arg("debug") = "default_def_schema_t_t")
      .def("impl_t_t", &impl_cpp<&identity>, py::arg("name"), py::arg("dispatch") = "",
           py::arg("debug") = "impl_t_t")
      .def("impl_tt_t", &impl_cpp<&first_of_two>, py::arg("name"), py::arg("dispatch") = "",
           py::arg("debug") = "")
      .def(
          "impl",
          [](py::object self, const std::string& name, const std::string& dispatch,
             py::object func) {
            DispatchModule& d = module_of(self);
            std::optional<DispatchKey> key = key_or_none(dispatch);
            std::optional<DispatchKey> effective = key ? key : d.lib.key();
            std::string site = d.file + ":" + std::to_string(d.line);
            check_callable(func);
            PythonKernel k = make_python_kernel(std::move(func), effective, site, false, false);
            drain_releases();
            py::gil_scoped_release r;
            d.lib.impl(name, key, CppFunction::from_kernel(std::move(k.kernel)), d.site());
          },
          py::arg("name"), py::arg("dispatch"), py::arg("func"))
      .def(
          "fallback_fallthrough",
          [](py::object self, const std::string& dispatch) {
            DispatchModule& d = module_of(self);
            std::optional<DispatchKey> key = key_or_none(dispatch);
            // torch's CppFunction carries its own key; ours is the library's.
            OPD_CHECK(!key || key == d.lib.key(),
                      "fallback_fallthrough({}): a fallback is registered to its library's key, "
                      "which is {}; make the library with _dispatch_library(\"IMPL\", \"_\", "
                      "\"{}\")",
                      dispatch, d.lib.key() ? std::string(to_string(*d.lib.key())) : "none",
                      dispatch);
            drain_releases();
            {
              py::gil_scoped_release r;
              d.lib.fallback(CppFunction::make_fallthrough(), d.site());
            }
            return self;
          },
          py::arg("dispatch") = "");

  m.def(
      "_dispatch_library",
      [](const std::string& kind, std::string name, const std::string& dispatch, std::string file,
         uint32_t linenum) {
        Library::Kind k = parse_kind(kind);
        std::optional<DispatchKey> key = key_or_none(dispatch);
        drain_releases();
        py::gil_scoped_release r;
        return Holder(new DispatchModule(k, std::move(name), key, std::move(file), linenum));
      },
      py::arg("kind"), py::arg("name"), py::arg("dispatch"), py::arg("file") = "/dev/null",
      py::arg("linenum") = 0);
}

}  // namespace opd::python
