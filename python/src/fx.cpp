// opdispatch.fx's C++ half: the graph of opd::fx (core/fx) and its capture mode, which
// python/opdispatch/fx/ wraps as torch.fx's GraphModule, Graph and Node, and make_fx. The
// graph is built, printed and run in C++; Python sees its nodes as plain values.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "bindings.h"
#include "convert.h"
#include "opd/dispatch_mode.h"
#include "opd/fx/capture.h"
#include "opd/fx/graph.h"

namespace py = pybind11;

namespace opd::python {
namespace {

// An argument as Python sees it: nodes through `ref(index)` (the Python Node object of the
// index-th node, made before), constants as Python values, lists and tuples as lists and tuples.
py::object arg_object(const fx::Arg& a, const py::function& ref) {
  switch (a.kind) {
    case fx::Arg::Kind::Node:
      return ref(a.node->index());
    case fx::Arg::Kind::Constant:
      return from_ivalue(a.constant);
    case fx::Arg::Kind::List:
    case fx::Arg::Kind::Tuple: {
      py::list items;
      for (const fx::Arg& item : a.items) items.append(arg_object(item, ref));
      if (a.kind == fx::Arg::Kind::List) return items;
      return py::tuple(items);
    }
  }
  return py::none();
}

// (op, name, target, args, kwargs) of node i, its target "aten::add.Tensor", "getitem", or the
// placeholder's, attribute's or output's name.
py::tuple node_info(const fx::Graph& g, size_t i, const py::function& ref) {
  const fx::Node& n = *g.nodes().at(i);
  std::string target = n.target() ? n.target()->operator_name().to_string() : n.target_string();
  py::list args;
  for (const fx::Arg& a : n.args()) args.append(arg_object(a, ref));
  if (n.op() == fx::Node::Op::Placeholder && n.default_value()) {
    args.append(from_ivalue(*n.default_value()));
  }
  py::dict kwargs;
  for (const auto& [name, a] : n.kwargs()) kwargs[py::str(name)] = arg_object(a, ref);
  return py::make_tuple(fx::Node::op_name(n.op()), n.name(), target, py::tuple(args), kwargs);
}

// The program's result with its tuples and lists kept apart (to_ivalue makes both a list).
IValue output_of(py::handle result) {
  if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
    std::vector<IValue> items;
    for (py::handle item : result) items.push_back(output_of(item));
    return py::isinstance<py::tuple>(result) ? IValue::make_tuple(std::move(items))
                                             : IValue::make_generic_list(std::move(items));
  }
  return to_ivalue(result);
}

}  // namespace

void bind_fx(py::module_& m) {
  py::class_<fx::Graph, std::shared_ptr<fx::Graph>>(m, "_FxGraph")
      .def_property_readonly("code", &fx::Graph::code)
      .def_property_readonly("pytree_arguments", &fx::Graph::pytree_arguments)
      .def("readable", &fx::Graph::readable, py::arg("class_name"))
      .def("__len__", [](const fx::Graph& g) { return g.nodes().size(); })
      .def("node_info", &node_info, py::arg("index"), py::arg("ref"))
      .def("attributes",
           [](const fx::Graph& g) {
             py::dict out;
             for (const auto& [name, t] : g.attributes()) out[py::str(name)] = wrap(t);
             return out;
           })
      .def("run", [](const fx::Graph& g, const py::args& args) {
        std::vector<IValue> inputs;
        for (py::handle a : args) inputs.push_back(to_ivalue(a));
        IValue out;
        {
          py::gil_scoped_release release;
          out = g.run(std::move(inputs));
        }
        return from_ivalue(std::move(out));
      });

  // Pushed on this thread's dispatch mode stack by __enter__, popped by __exit__.
  py::class_<fx::CaptureMode, std::shared_ptr<fx::CaptureMode>>(m, "_FxCaptureMode")
      .def(py::init<>())
      .def(
          "add_input",
          [](fx::CaptureMode& mode, const std::string& name, py::handle value,
             py::handle default_value) {
            std::optional<IValue> d;
            if (!default_value.is(py::ellipsis())) d = to_ivalue(default_value);
            mode.add_input(name, to_ivalue(value), std::move(d));
          },
          py::arg("name"), py::arg("value"), py::arg("default") = py::ellipsis())
      .def("set_output",
           [](fx::CaptureMode& mode, py::handle result) { mode.set_output(output_of(result)); })
      .def("set_pytree_arguments",
           [](fx::CaptureMode& mode, std::vector<std::string> names) {
             mode.graph().set_pytree_arguments(std::move(names));
           })
      .def("take_graph", &fx::CaptureMode::take_graph)
      .def("__enter__",
           [](const std::shared_ptr<fx::CaptureMode>& mode) { push_dispatch_mode(mode); })
      .def("__exit__", [](const std::shared_ptr<fx::CaptureMode>& mode, const py::args&) {
        if (current_dispatch_mode() == mode) {
          pop_dispatch_mode();
          return;
        }
        // A mode entered inside the traced function was not exited: the stack goes back to
        // what it was before the capture (the capture and every mode above it popped), so that
        // no later operator of this thread records into a finished graph, then the refusal.
        bool on_stack = false;
        for (size_t i = 0; i < dispatch_mode_stack_len(); ++i) {
          on_stack = on_stack || dispatch_mode_at(i) == mode;
        }
        if (on_stack) {
          while (pop_dispatch_mode() != mode) {
          }
        }
        OPD_CHECK(false,
                  "make_fx: the capture mode is not the top dispatch mode at exit (a mode entered "
                  "inside the traced function was not exited)");
      });
}

}  // namespace opd::python
