// The plugin manager from Python: PluginStatus with the C++ fields, and the manager's calls,
// each made without the GIL (Note [The GIL and the dispatcher's locks] in module.cpp).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "opd/plugin_manager.h"

namespace py = pybind11;

namespace opd::python {
namespace {

std::vector<std::string> key_names(const std::vector<DispatchKey>& keys) {
  std::vector<std::string> out;
  for (DispatchKey k : keys) out.emplace_back(to_string(k));
  return out;
}

}  // namespace

void bind_plugins(py::module_& m) {
  py::class_<PluginStatus>(m, "PluginStatus", py::module_local())
      .def_readonly("name", &PluginStatus::name)
      .def_readonly("version", &PluginStatus::version)
      .def_property_readonly("state", [](const PluginStatus& s) { return to_string(s.state); })
      .def_readonly("reason", &PluginStatus::reason)
      .def_property_readonly("dispatch_keys",
                             [](const PluginStatus& s) { return key_names(s.dispatch_keys); })
      .def_property_readonly("served_keys",
                             [](const PluginStatus& s) { return key_names(s.served_keys); })
      .def_readonly("requires", &PluginStatus::requires_)
      .def_readonly("load_default", &PluginStatus::load_default)
      .def_readonly("description", &PluginStatus::description)
      .def_readonly("manifest", &PluginStatus::manifest)
      .def_readonly("library", &PluginStatus::library)
      .def_readonly("registrations", &PluginStatus::registrations)
      .def("__repr__", [](const PluginStatus& s) {
        std::string r = "PluginStatus(name='" + s.name + "', version='" + s.version + "', state='" +
                        to_string(s.state) + "'";
        if (!s.reason.empty()) r += ", reason='" + s.reason + "'";
        return r + ")";
      });

  using Release = py::call_guard<py::gil_scoped_release>;
  m.def(
      "_plugins_list", [] { return plugins().list(); }, Release());
  m.def(
      "_plugins_load", [](const std::string& n) { return plugins().load(n); }, Release());
  m.def(
      "_plugins_load_default", [] { return plugins().load_default(); }, Release());
  m.def(
      "_plugins_unload",
      [](const std::string& n, bool cascade) { return plugins().unload(n, cascade); },
      py::arg("name"), py::arg("cascade") = false, Release());
  m.def(
      "_plugins_reload", [](const std::string& n) { return plugins().reload(n); }, Release());
  m.def(
      "_plugins_status", [](const std::string& n) { return plugins().status(n); }, Release());
  m.def(
      "_plugins_search_path", [] { return plugins().search_path(); }, Release());
}

}  // namespace opd::python
