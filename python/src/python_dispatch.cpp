// Note [Python dispatch modes]
// A TorchDispatchMode is a Python object on the core's thread-local mode stack
// (opd/dispatch_mode.h, Note [Dispatch modes]): _push_on_torch_dispatch_stack wraps it in a
// PyDispatchMode, whose dispatch() the Python key's fallback calls with the mode popped. The call
// is torch's: the mode's __torch_dispatch__(func, types, args, kwargs), where func is the
// opdispatch.ops OpOverload (the same object as opdispatch.ops.aten.add.Tensor), types the classes
// of the tensor subclass arguments (empty for plain tensors), and the arguments are split as torch
// 1.13's parseIValuesToPyArgsKwargs splits them: the positional ones up to the first kwarg-only
// one, less the trailing ones equal to their default; the kwarg-only ones by name, less those
// equal to their default. A wrapped number (the 2 of x * 2) is passed as the number, as torch's.
// What it returns is converted by the schema's returns as a Python kernel's result is. The GIL
// is taken only for that Python part (CallbackGil), on whatever thread dispatched, and every
// call the mode makes releases it again (Note [The GIL and the dispatcher's locks]). A Python
// exception reaches a Python caller as itself (PythonKernelError, module.cpp), and the fallback
// has pushed the mode back by then. Nesting is bounded per thread (kMaxDepth): a subclass whose
// __torch_dispatch__ calls func on its own instances would recurse through C++ frames past the
// C stack otherwise.
//
// A mode the stack holds that is not Python (a C++ mode, such as the graph capture's) comes out
// of _pop_torch_dispatch_stack as an opaque _DispatchMode object that can be pushed back.

#include "python_dispatch.h"

#include <fmt/format.h>

#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "gil.h"
#include "kernel.h"
#include "opd/bind/binding.h"
#include "opd/dispatch_mode.h"
#include "opd/function_schema.h"
#include "opd/operator_entry.h"

namespace py = pybind11;

namespace opd::python {

namespace {

constexpr int kMaxDepth = 100;
thread_local int t_depth = 0;

// A Python mode object on the core's stack.
class PyDispatchMode final : public DispatchMode {
 public:
  explicit PyDispatchMode(py::object mode) : mode_(std::move(mode)) {}
  void dispatch(const OperatorHandle& op, DispatchKeySet, Stack* stack) override {
    call_torch_dispatch(op, stack, mode_.get());
  }
  // REQUIRES: the GIL.
  py::object object() const { return py::reinterpret_borrow<py::object>(mode_.get()); }

 private:
  PythonCallable mode_;  // a strong reference, dropped from any thread
};

// opdispatch.ops._overload_for: the OpOverload of a qualified name. Never destroyed (the
// interpreter may be gone by static destruction).
py::handle overload_for() {
  static py::object* f =
      new py::object(py::module_::import("opdispatch.ops").attr("_overload_for"));
  return *f;
}

// A value as __torch_dispatch__ receives it: a wrapped number as the number.
py::object argument_object(const IValue& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (t.defined() && t.unsafe_get_impl()->is_wrapped_number() && t.dim() == 0) {
      const void* p = t.unsafe_get_impl()->data();
      switch (t.dtype()) {
        case ScalarType::Float64:
          return py::float_(*static_cast<const double*>(p));
        case ScalarType::Int64:
          return py::int_(*static_cast<const int64_t*>(p));
        case ScalarType::Bool:
          return py::bool_(*static_cast<const bool*>(p));
        case ScalarType::ComplexDouble:
          return py::cast(*static_cast<const std::complex<double>*>(p));
        default:
          break;
      }
    }
  }
  return from_ivalue(v);
}

// Whether argument i holds its schema default (torch leaves such arguments out).
bool is_default(const Argument& arg, const IValue& v) {
  if (!arg.default_value()) return false;
  try {
    return bind::default_argument(*arg.default_value(), *arg.type()) == v;
  } catch (const Error&) {
    return false;
  }
}

// Adds to `types` the class of each tensor subclass instance in `obj` (a list's items too), once
// each, in order, a subclass before its bases.
void collect_types(py::handle obj, py::list& types) {
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    for (py::handle item : py::reinterpret_borrow<py::sequence>(obj)) collect_types(item, types);
    return;
  }
  if (!is_tensor_object(obj)) return;
  const Tensor* t = unwrap(obj);
  if (t == nullptr || !t->key_set().has(DispatchKey::Python)) return;
  if (Py_TYPE(obj.ptr()) == tensor_type()) return;
  py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  if (types.contains(type)) return;
  // As torch orders overloaded arguments: a subclass before its base classes.
  for (size_t i = 0; i < types.size(); ++i) {
    if (PyType_IsSubtype(Py_TYPE(obj.ptr()), reinterpret_cast<PyTypeObject*>(types[i].ptr()))) {
      types.insert(static_cast<py::ssize_t>(i), type);
      return;
    }
  }
  types.append(type);
}

struct PythonArguments {
  py::tuple args;
  py::dict kwargs;
  py::tuple types;
};

PythonArguments arguments_to_python(const FunctionSchema& schema, const Stack& stack, size_t first,
                                    size_t n) {
  const auto& arguments = schema.arguments();
  auto value = [&](size_t i) -> const IValue& { return stack[first + i]; };
  size_t n_positional = n;
  if (!schema.is_vararg()) {
    n_positional = 0;
    while (n_positional < n && !arguments[n_positional].kwarg_only()) ++n_positional;
    while (n_positional > 0 && is_default(arguments[n_positional - 1], value(n_positional - 1))) {
      --n_positional;
    }
  }
  PythonArguments out;
  py::list types;
  out.args = py::tuple(n_positional);
  for (size_t i = 0; i < n_positional; ++i) {
    py::object o = argument_object(value(i));
    collect_types(o, types);
    out.args[i] = std::move(o);
  }
  if (!schema.is_vararg()) {
    for (size_t i = n_positional; i < n; ++i) {
      if (!arguments[i].kwarg_only() || is_default(arguments[i], value(i))) continue;
      py::object o = argument_object(value(i));
      collect_types(o, types);
      out.kwargs[py::str(arguments[i].name())] = std::move(o);
    }
  }
  out.types = py::tuple(types);
  return out;
}

}  // namespace

bool call_torch_dispatch(const OperatorHandle& op, Stack* stack, py::handle mode) {
  const FunctionSchema* published = op.entry().schema_or_null();
  OPD_CHECK(published != nullptr,
            "{}: the operator's definition was removed while a call was on its way to "
            "__torch_dispatch__",
            op.operator_name().to_string());
  const FunctionSchema& schema = *published;
  auto what = [&] {
    return schema.operator_name().to_string() + ": __torch_dispatch__" +
           (mode ? " of a TorchDispatchMode" : " of a tensor subclass");
  };
  OPD_CHECK(t_depth < kMaxDepth,
            "{} nested {} times on one thread: a __torch_dispatch__ that calls the operator on "
            "its own subclass instances recurses; unwrap them first",
            what(), kMaxDepth);
  struct Depth {
    Depth() { ++t_depth; }
    ~Depth() { --t_depth; }
  } depth;
  const size_t n = schema.is_vararg() ? stack->size() : schema.arguments().size();
  OPD_INTERNAL_ASSERT(stack->size() >= n, "{}: {} arguments on a stack of {}", what(), n,
                      stack->size());
  const size_t first = stack->size() - n;
  std::vector<IValue> results;
  {
    CallbackGil gil(what);
    try {
      py::object func = overload_for()(schema.operator_name().to_string());
      PythonArguments a = arguments_to_python(schema, *stack, first, n);
      if (!mode && a.types.empty()) return false;
      py::object result;
      if (mode) {
        result = mode.attr("__torch_dispatch__")(func, a.types, a.args, a.kwargs);
      } else {
        for (py::handle type : a.types) {
          result = type.attr("__torch_dispatch__")(func, a.types, a.args, a.kwargs);
          if (!result.is(py::reinterpret_borrow<py::object>(Py_NotImplemented))) break;
        }
        if (!result || result.is(py::reinterpret_borrow<py::object>(Py_NotImplemented))) {
          std::string names;
          for (py::handle type : a.types) {
            names += "  - tensor subclass " + py::repr(type).cast<std::string>() + "\n";
          }
          throw TypeError(fmt::format(
              "Multiple dispatch failed for '{}'; all __torch_dispatch__ handlers returned "
              "NotImplemented:\n\n{}",
              schema.operator_name().to_string(), names));
        }
      }
      results = results_from_python(schema, what, result);
    } catch (py::error_already_set& e) {
      std::string message = what() + " raised " + python_error_text(e);
      throw PythonKernelError(std::move(message), std::move(e));
    }
  }
  stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
  for (IValue& r : results) stack->push_back(std::move(r));
  return true;
}

void bind_python_dispatch(py::module_& m) {
  // A mode the stack holds that Python did not push (a C++ mode): opaque, can be pushed back.
  py::class_<DispatchMode, std::shared_ptr<DispatchMode>>(m, "_DispatchMode", py::module_local());

  m.def("_push_on_torch_dispatch_stack", [](py::object mode) {
    if (py::isinstance<DispatchMode>(mode)) {
      push_dispatch_mode(mode.cast<std::shared_ptr<DispatchMode>>());
    } else {
      push_dispatch_mode(std::make_shared<PyDispatchMode>(std::move(mode)));
    }
  });
  auto mode_object = [](std::shared_ptr<DispatchMode> mode) -> py::object {
    if (!mode) return py::none();
    if (auto* py_mode = dynamic_cast<PyDispatchMode*>(mode.get())) return py_mode->object();
    return py::cast(std::move(mode));
  };
  m.def("_pop_torch_dispatch_stack", [mode_object] { return mode_object(pop_dispatch_mode()); });
  m.def("_len_torch_dispatch_stack", [] { return dispatch_mode_stack_len(); });
  m.def("_get_dispatch_stack_at",
        [mode_object](size_t i) { return mode_object(dispatch_mode_at(i)); });
  bind_python_dispatch_subclass(m);
}

}  // namespace opd::python
