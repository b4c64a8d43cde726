// opdispatch.autograd.Function's C++ half: the backward of a Python function as the autograd
// plugin's node calls it (a FunctionBackward, opd/autograd_function.h), and _record_function,
// which hands a forward's outputs to the plugin. The Python half (ctx, apply) is
// opdispatch/autograd.py. Also _functions.UndefinedGrad, torch's testing helper.

#include "opd/autograd_function.h"

#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "gil.h"
#include "kernel.h"
#include "opd/autograd.h"

namespace py = pybind11;

namespace opd::python {
namespace {

using autograd::tensor_list;

// Tensors and Nones (undefined tensors) of a Python sequence; `what` names it in errors.
tensor_list tensors_or_none(py::handle seq, const std::string& what) {
  tensor_list out;
  size_t i = 0;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(seq)) {
    if (h.is_none()) {
      out.emplace_back();
    } else {
      const Tensor* t = unwrap(h);
      OPD_CHECK_T(TypeError, t != nullptr, "{}: element {} must be Tensor or None, not {}", what, i,
                  type_name(h));
      out.push_back(*t);
    }
    ++i;
  }
  return out;
}

py::list wrap_all(const tensor_list& ts) {
  py::list out;
  for (const Tensor& t : ts) out.append(wrap(t));  // None for an undefined one
  return out;
}

// `fn(grads, saved, needs_input_grad)`, the Python closure Function.apply made: the
// gradients of the forward's arguments back, as a sequence of tensors and Nones.
class PyFunctionBackward final : public autograd::detail::FunctionBackward {
 public:
  PyFunctionBackward(py::object fn, std::string name)
      : fn_(fn.release().ptr()), name_(std::move(name)) {}
  // Any thread, with or without the GIL (the graph may go last on a C++ thread).
  ~PyFunctionBackward() override { release_pyobject(fn_); }

  std::string name() const override { return name_; }

  tensor_list backward(tensor_list grads, tensor_list saved,
                       std::vector<bool> needs_input_grad) override {
    auto what = [&] { return "the backward of " + name_; };  // made only for an error
    CallbackGil gil(what);
    try {
      py::tuple needs(needs_input_grad.size());
      for (size_t i = 0; i < needs_input_grad.size(); ++i) {
        needs[i] = py::bool_(needs_input_grad[i]);
      }
      py::object result =
          py::reinterpret_borrow<py::object>(fn_)(wrap_all(grads), wrap_all(saved), needs);
      return tensors_or_none(result, name_ + ": backward's result");
    } catch (py::error_already_set& e) {
      std::string message = what() + " raised " + python_error_text(e);
      throw PythonKernelError(std::move(message), std::move(e));
    }
  }

 private:
  PyObject* fn_;
  std::string name_;
};

// The backward of UndefinedGrad: an undefined gradient for its one input, whatever came in.
class UndefinedGradBackward final : public autograd::detail::FunctionBackward {
 public:
  std::string name() const override { return "UndefinedGradBackward"; }
  tensor_list backward(tensor_list, tensor_list, std::vector<bool>) override {
    return tensor_list(1);
  }
};

// torch._C._functions.UndefinedGrad: called on one tensor, a copy of it whose gradient reaches
// the tensor's history undefined, as if the graph had given none; for tests of how backward
// functions and the engine treat a missing gradient.
struct UndefinedGrad {
  py::object call(const py::args& args) const {
    if (args.size() != 1) {
      throw py::type_error(fmt::format("expected 1 arguments, got {} instead", args.size()));
    }
    const Tensor* input = unwrap(args[0]);
    if (input == nullptr) throw py::type_error("argument 0 is not a Variable");
    autograd::detail::FunctionRecord r;
    r.backward = IValue::make_capsule(std::string(autograd::detail::kFunctionBackwardCapsule),
                                      std::make_shared<UndefinedGradBackward>());
    r.record = is_grad_enabled() && autograd::detail::input_requires_grad(*input);
    r.inputs = {*input};
    r.is_variable_input = {true};
    tensor_list out;
    {
      py::gil_scoped_release release;
      {
        NoGradGuard no_grad;
        r.outputs = {opd::clone(*input)};
      }
      out = autograd::detail::record_function(std::move(r));
    }
    return wrap(out.at(0));
  }
};

}  // namespace

void bind_autograd_function(py::module_& m) {
  py::module_ functions = m.def_submodule(
      "_functions", "Autograd functions written in C++ (torch._C._functions): UndefinedGrad.");
  py::class_<UndefinedGrad>(functions, "UndefinedGrad")
      .def(py::init<>())
      .def("__call__", &UndefinedGrad::call);

  m.def("_record_function",
        [](py::object backward, std::string name, bool record, py::handle inputs,
           std::vector<bool> is_variable_input, py::handle outputs, py::handle to_save,
           py::handle dirty, py::handle non_differentiable, bool materialize_grads) {
          autograd::detail::FunctionRecord r;
          std::shared_ptr<autograd::detail::FunctionBackward> fn =
              std::make_shared<PyFunctionBackward>(std::move(backward), name);
          r.backward = IValue::make_capsule(std::string(autograd::detail::kFunctionBackwardCapsule),
                                            std::static_pointer_cast<void>(std::move(fn)));
          r.record = record;
          r.inputs = tensors_or_none(inputs, name + ": inputs");
          r.is_variable_input = std::move(is_variable_input);
          r.outputs = tensors_or_none(outputs, name + ": outputs");
          r.to_save = tensors_or_none(to_save, "save_for_backward");
          r.dirty = tensors_or_none(dirty, "mark_dirty");
          r.non_differentiable = tensors_or_none(non_differentiable, "mark_non_differentiable");
          r.materialize_grads = materialize_grads;
          tensor_list out;
          {
            py::gil_scoped_release release;
            out = autograd::detail::record_function(std::move(r));
          }
          return wrap_all(out);
        });
}

}  // namespace opd::python
