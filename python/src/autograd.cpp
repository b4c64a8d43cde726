// Grad mode, autograd.grad and the thread-local dispatch key state, with torch._C's names:
// _set_grad_enabled, is_grad_enabled, _dispatch_tls_set_dispatch_key_excluded,
// _dispatch_tls_is_dispatch_key_excluded (and _included), _ExcludeDispatchKeyGuard,
// _IncludeDispatchKeyGuard. All of it is per thread, as in PyTorch: a no_grad block on one
// thread leaves the others recording (the context managers are opdispatch/autograd/grad_mode.py).

#include "opd/autograd.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "opd/local_dispatch_key_set.h"

namespace py = pybind11;

namespace opd::python {
namespace {

std::vector<Tensor> tensors(py::handle seq, const char* what) {
  std::vector<Tensor> out;
  if (unwrap(seq)) {
    out.push_back(*unwrap(seq));
    return out;
  }
  for (py::handle h : py::reinterpret_borrow<py::sequence>(seq)) {
    out.push_back(unwrap_or_throw(h, what));
  }
  return out;
}

// A guard object for Python's `with`: __enter__ installs, __exit__ restores.
template <class Guard>
struct PyGuard {
  explicit PyGuard(DispatchKeySet k) : keys(k) {}
  DispatchKeySet keys;
  std::unique_ptr<Guard> guard;
};

// torch._C's _ExcludeDispatchKeyGuard / _IncludeDispatchKeyGuard: a key name or a DispatchKeySet.
template <class Guard>
void bind_key_guard(py::module_& m, const char* name) {
  using G = PyGuard<Guard>;
  py::class_<G>(m, name, py::module_local())
      .def(py::init([](py::handle keys) {
        if (PyUnicode_Check(keys.ptr())) {
          return G(DispatchKeySet(parse_dispatch_key(keys.cast<std::string>())));
        }
        return G(keys.cast<DispatchKeySet>());
      }))
      .def(
          "__enter__",
          [](G& g) {
            g.guard = std::make_unique<Guard>(g.keys);
            return &g;
          },
          py::return_value_policy::reference)
      .def("__exit__", [](G& g, py::args) { g.guard.reset(); });
}

}  // namespace

void bind_autograd(py::module_& m) {
  m.def("is_grad_enabled", [] { return is_grad_enabled(); });
  m.def("_set_autograd_fallback_mode",
        [](std::string_view mode) { autograd::set_fallback_mode(mode); });
  m.def("_get_autograd_fallback_mode", [] { return autograd::fallback_mode(); });
  m.def("_set_grad_enabled", [](bool enabled) {
    for (DispatchKey k : kAutogradKeySet) tls_set_dispatch_key_excluded(k, !enabled);
  });
  m.def(
      "_autograd_grad",
      [](py::handle outputs, py::handle inputs, py::object grad_outputs,
         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
        std::vector<Tensor> outs = tensors(outputs, "outputs");
        std::vector<Tensor> ins = tensors(inputs, "inputs");
        std::vector<Tensor> grads;
        if (!grad_outputs.is_none()) {
          if (unwrap(grad_outputs)) {
            grads.push_back(*unwrap(grad_outputs));
          } else {
            for (py::handle h : py::reinterpret_borrow<py::sequence>(grad_outputs)) {
              grads.push_back(h.is_none() ? Tensor() : unwrap_or_throw(h, "grad_outputs"));
            }
          }
        }
        std::vector<Tensor> result;
        {
          py::gil_scoped_release r;
          result = autograd::grad(outs, ins, grads, retain_graph, create_graph, allow_unused);
        }
        py::tuple out(result.size());
        for (size_t i = 0; i < result.size(); ++i) out[i] = wrap(std::move(result[i]));
        return out;
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs") = py::none(),
      py::arg("retain_graph") = py::none(), py::arg("create_graph") = false,
      py::arg("allow_unused") = false);

  // What a kernel on an Autograd key removes to pass a call below autograd.
  m.def("_autograd_keyset",
        [] { return kAutogradKeySet | DispatchKeySet(DispatchKey::ADInplaceOrView); });
  m.def("_dispatch_tls_set_dispatch_key_excluded", [](const std::string& k, bool b) {
    tls_set_dispatch_key_excluded(parse_dispatch_key(k), b);
  });
  m.def("_dispatch_tls_is_dispatch_key_excluded",
        [](const std::string& k) { return tls_is_dispatch_key_excluded(parse_dispatch_key(k)); });
  m.def("_dispatch_tls_set_dispatch_key_included", [](const std::string& k, bool b) {
    tls_set_dispatch_key_included(parse_dispatch_key(k), b);
  });
  m.def("_dispatch_tls_is_dispatch_key_included",
        [](const std::string& k) { return tls_is_dispatch_key_included(parse_dispatch_key(k)); });
  m.def("_dispatch_tls_local_exclude_set", [] { return tls_local_dispatch_key_set().excluded; });
  m.def("_dispatch_tls_local_include_set", [] { return tls_local_dispatch_key_set().included; });

  bind_key_guard<ExcludeDispatchKeyGuard>(m, "_ExcludeDispatchKeyGuard");
  bind_key_guard<IncludeDispatchKeyGuard>(m, "_IncludeDispatchKeyGuard");
}

}  // namespace opd::python
