// The dispatcher's introspection with torch._C's names and return types: _dispatch_dump,
// _dispatch_dump_table, _dispatch_get_registrations_for_dispatch_key,
// _dispatch_print_registrations_for_dispatch_key, _dispatch_has_kernel_for_dispatch_key,
// _dispatch_has_backend_fallback, _dispatch_find_dangling_impls, _dispatch_check_invariants,
// _dispatch_check_all_invariants, _dispatch_get_all_op_names. Each reads the dispatcher without
// the GIL (Note [The GIL and the dispatcher's locks] in module.cpp). A dispatch key that does not
// parse is torch's RuntimeError, "could not parse dispatch key: X".

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "opd/dispatcher.h"
#include "opd/error.h"

namespace py = pybind11;

namespace opd::python {
namespace {

std::optional<OperatorHandle> find(const std::string& name) {
  return Dispatcher::singleton().find_op(parse_operator_name(name));
}

// As torch: "operator aten::nope does not exist".
OperatorHandle find_or_throw(const std::string& name) {
  auto op = find(name);
  OPD_CHECK(op.has_value(), "operator {} does not exist", name);
  return *op;
}

// The operators with a kernel registered to `key` ("": all), as torch.
std::vector<std::string> registrations_for(const std::string& key) {
  std::optional<DispatchKey> k;
  if (!key.empty()) k = parse_dispatch_key_as_torch(key);
  py::gil_scoped_release r;
  return Dispatcher::singleton().registrations_for_dispatch_key(k);
}

}  // namespace

DispatchKey parse_dispatch_key_as_torch(const std::string& key) {
  if (auto k = try_parse_dispatch_key(key)) return *k;
  std::string known;
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    known += (known.empty() ? "" : ", ") + std::string(to_string(static_cast<DispatchKey>(i)));
  }
  throw Error("could not parse dispatch key: " + key + "; the keys are " + known);
}

void bind_introspection(py::module_& m) {
  using Release = py::call_guard<py::gil_scoped_release>;
  m.def(
      "_dispatch_dump",
      [](const std::string& name) {
        detail::CallScope scope;  // Note [Operator handles from Python] in ops.cpp
        auto op = find(name);
        return op ? op->dump_state() : std::string();
      },
      py::arg("name"), Release());
  m.def(
      "_dispatch_dump_table",
      [](const std::string& name) {
        detail::CallScope scope;
        auto op = find(name);
        return op ? op->dump_computed_table() : std::string();
      },
      py::arg("name"), Release());
  m.def("_dispatch_get_registrations_for_dispatch_key", &registrations_for,
        py::arg("dispatch_key") = "");
  // One name a line on sys.stdout (torch writes std::cout).
  m.def(
      "_dispatch_print_registrations_for_dispatch_key",
      [](const std::string& key) {
        for (const std::string& name : registrations_for(key)) py::print(name);
      },
      py::arg("dispatch_key") = "");
  m.def(
      "_dispatch_has_kernel_for_dispatch_key",
      [](const std::string& name, const std::string& key) {
        detail::CallScope scope;
        return find_or_throw(name).has_kernel_for_dispatch_key(parse_dispatch_key_as_torch(key));
      },
      py::arg("name"), py::arg("dispatch"), Release());
  m.def(
      "_dispatch_find_dangling_impls",
      [] {
        detail::CallScope scope;
        std::vector<std::string> out;
        for (const OperatorName& n : Dispatcher::singleton().find_dangling_impls()) {
          if (auto op = Dispatcher::singleton().find_op(n)) out.push_back(op->dump_state());
        }
        return out;
      },
      Release());
  // None for an operator that does not exist, as torch (PythonDispatcher checks a bare name).
  m.def(
      "_dispatch_check_invariants",
      [](const std::string& name) {
        detail::CallScope scope;
        if (auto op = find(name)) op->entry().check_invariants();
      },
      py::arg("name"), Release());
  m.def(
      "_dispatch_has_backend_fallback",
      [](const std::string& key) {
        DispatchKey k = parse_dispatch_key_as_torch(key);
        py::gil_scoped_release r;
        return Dispatcher::singleton().fallback_debug(k).has_value();
      },
      py::arg("dispatch"));
  m.def(
      "_dispatch_get_all_op_names",
      [] {
        std::vector<std::string> out;
        for (const OperatorName& n : Dispatcher::singleton().all_op_names()) {
          out.push_back(n.to_string());
        }
        return out;
      },
      Release());
  m.def(
      "_dispatch_check_all_invariants", [] { Dispatcher::singleton().check_invariants(); },
      Release());
}

}  // namespace opd::python
