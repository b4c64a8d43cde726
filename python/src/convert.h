#pragma once

// Python objects and opdispatch values, both ways (convert.cpp): tensors, dtypes, devices,
// layouts, memory formats, numbers and lists. See Note [Python values as IValues].

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "opd/device.h"
#include "opd/error.h"
#include "opd/ivalue.h"
#include "opd/layout.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd::python {

// The Python objects of opdispatch.dtype, .layout and .memory_format: one object per value,
// made once (`opdispatch.float32 is opdispatch.float`).
struct DType {
  ScalarType type;
};
struct LayoutObject {
  Layout layout;
};
struct MemoryFormatObject {
  MemoryFormat format;
};

// The Python object for a tensor; None for an undefined one. A wrapper subclass's tensor gets
// its subclass object (python_dispatch.h's subclass_object).
pybind11::object wrap(Tensor t);
// A new object of `type` (opdispatch.Tensor or a Python subclass of it) holding `t`.
pybind11::object wrap_as(Tensor t, PyTypeObject* type);
// The opdispatch.Tensor type object.
PyTypeObject* tensor_type();
// The tensor a Python object holds, or null when it is not an opdispatch.Tensor (or one made
// by Tensor.__new__ alone, which holds none).
const Tensor* unwrap(pybind11::handle h);
// Whether it is an opdispatch.Tensor (or a subclass's instance), holding a tensor or not.
bool is_tensor_object(pybind11::handle h);
// As unwrap, throwing TypeError "<what> must be Tensor, not <type>" when it is not one.
const Tensor& unwrap_or_throw(pybind11::handle h, const char* what);

pybind11::object dtype_object(ScalarType t);
std::optional<ScalarType> as_dtype(pybind11::handle h);
std::optional<Device> as_device(pybind11::handle h);  // a device object or a str

// A Python int outside int64 where one is needed: a RuntimeError in Python, with torch's text
// and the value ("Overflow when unpacking long: 1180591620717411303424 does not fit in int64").
// `value()` is the value's text, for callers that say where it was.
class IntOverflowError : public Error {
 public:
  // `where`, when given, follows in parentheses: "... int64 (ones(), argument at position 1)".
  explicit IntOverflowError(std::string value, const std::string& where = "");
  const std::string& value() const { return value_; }

 private:
  std::string value_;
};

// A Python int (exactly or a subclass) as int64_t; IntOverflowError when it does not fit.
int64_t int64_of(pybind11::handle int_object);

// A Python number (bool, int, float, complex, or numpy's) as a Scalar; nullopt for anything
// else. IntOverflowError for an int outside int64.
std::optional<Scalar> as_scalar(pybind11::handle h);
// As as_scalar, and a 0-d numpy array too: what an operator (x + a) takes as a number, as
// torch's operators do (its arguments do not: `alpha` is a number, not an array).
std::optional<Scalar> as_number_operand(pybind11::handle h);

// Note [Python values as IValues]: without a schema; the schema-driven conversions are
// the binder's (bind::convert_argument), shared with opd eval.
IValue to_ivalue(pybind11::handle h);
pybind11::object from_ivalue(IValue v);

// Whether `t` requires grad: false without autograd state (whether or not the autograd plugin
// is loaded), else the autograd plugin's answer, asked without the GIL. REQUIRES: the GIL.
bool requires_grad_of(const Tensor& t);

// Python's name of an object's type, as PyTorch's argument errors print it ("int", "str").
std::string type_name(pybind11::handle h);

// Note [Fast pybind11 instances]
// pybind11 finds a bound class's type_info by its std::type_index, a hash of the mangled name,
// each time it loads a `T&` argument or casts a new T to Python (and first searches the
// registered instances for the pointer); on a small operator called from Python that is a
// tenth of the call. wrap() and self_as() keep the type_info they need and use pybind11's
// instance layout directly, as its own init_instance and loaders do. The classes involved have
// one pybind11 base (pybind11's simple layout) and a std::unique_ptr holder.

// The object `self` holds: an instance of T's bound class or of a Python subclass of it (as
// opdispatch.ops.OpOverload of _C._OpOverload). TypeError "descriptor '<method>' requires a
// '<class>' object but received a '<type>'" otherwise, as CPython's for a method called on the
// wrong object.
template <class T>
T& self_as(pybind11::handle self, const char* method) {
  static PyTypeObject* type = pybind11::detail::get_type_info(typeid(T))->type;
  if (!PyObject_TypeCheck(self.ptr(), type)) [[unlikely]] {
    throw pybind11::type_error(std::string("descriptor '") + method + "' requires a '" +
                               type->tp_name + "' object but received a '" + type_name(self) + "'");
  }
  auto* inst = reinterpret_cast<pybind11::detail::instance*>(self.ptr());
  void* value = inst->get_value_and_holder().value_ptr();
  if (value == nullptr) [[unlikely]] {  // made by __new__ alone
    throw pybind11::type_error(std::string(method) + "(): the '" + type->tp_name +
                               "' object was not initialized (its __init__ did not run)");
  }
  return *static_cast<T*>(value);
}

}  // namespace opd::python
