// opdispatch.autograd.Function's C++ half: the backward of a Python function as the autograd
// plugin's node calls it (a FunctionBackward, opd/autograd_function.h), and _record_function,
// which hands a forward's outputs to the plugin. The Python half (ctx, apply) is
// opdispatch/autograd.py.

#include "opd/autograd_function.h"

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

}  // namespace

void bind_autograd_function(py::module_& m) {
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
