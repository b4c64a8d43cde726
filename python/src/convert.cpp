// Note [Python values as IValues]
// Python to IValue without a schema, so that the schema-driven conversions stay in one place,
// opd::bind::convert_argument (shared with opd eval):
//   opdispatch.Tensor -> Tensor    bool -> Bool (tested before int: bool is an int subclass)
//   int -> Int (IntOverflowError beyond int64)    other objects with __index__ -> Int
//   float -> Double    complex -> ComplexDouble    str -> String    None -> None
//   numpy's numbers (np.float32...) -> what their item() gives, as above
//   dtype, device, layout, memory_format -> ScalarType, Device, Layout, MemoryFormat
//   Generator -> a Capsule of kind "Generator" (Note [Generator objects])
//   list, tuple -> a generic list of the converted items (convert_argument makes int[], ...)
//   anything else -> TypeError "opdispatch: cannot pass a <type> to an operator"
// IValue to Python is the reverse: an undefined tensor is None, every list is a list, a tuple
// a tuple.

#include "convert.h"

#include <pybind11/complex.h>

#include <complex>
#include <memory>
#include <vector>

#include "opd/error.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opd::python {

PyTypeObject* tensor_type() {
  static PyTypeObject* type = reinterpret_cast<PyTypeObject*>(
      py::detail::get_type_handle(typeid(Tensor), /*throw_if_missing=*/true).ptr());
  return type;
}

namespace {

// numpy's type `name` (generic, ndarray), or null while no one has imported numpy (then no
// object of it exists). Borrowed: the module keeps its types.
PyTypeObject* numpy_type(const char* name) {
  PyObject* numpy = PyImport_GetModule(py::str("numpy").ptr());
  if (!numpy) {
    PyErr_Clear();
    return nullptr;
  }
  py::object type = py::getattr(py::reinterpret_steal<py::object>(numpy), name, py::none());
  return PyType_Check(type.ptr()) ? reinterpret_cast<PyTypeObject*>(type.ptr()) : nullptr;
}

// Whether `h`'s dtype is a number's: bool, integer, float or complex (not a datetime, a string,
// an object...).
bool numeric_dtype(py::handle h) {
  std::string kind = py::str(h.attr("dtype").attr("kind"));
  return kind == "b" || kind == "i" || kind == "u" || kind == "f" || kind == "c";
}

// A numpy number: an instance of numpy.generic of a numeric dtype (np.float32(2), np.bool_).
// By the object's type itself (no __class__ lookup runs Python code).
bool is_numpy_number(py::handle h) {
  PyTypeObject* generic = numpy_type("generic");
  return generic && PyType_IsSubtype(Py_TYPE(h.ptr()), generic) && numeric_dtype(h);
}

// A 0-d numpy.ndarray (exactly: not a masked array) of a numeric dtype.
bool is_numpy_0d_number(py::handle h) {
  PyTypeObject* ndarray = numpy_type("ndarray");
  return ndarray && Py_TYPE(h.ptr()) == ndarray && h.attr("ndim").cast<int>() == 0 &&
         numeric_dtype(h);
}

// A numpy number as the Python number item() gives; longdouble and clongdouble, which item()
// keeps numpy's, in double precision.
std::optional<Scalar> numpy_number(py::handle h) {
  py::object item = h.attr("item")();
  if (!is_numpy_number(item)) return as_scalar(item);
  if (std::string(py::str(h.attr("dtype").attr("kind"))) == "c") {
    return Scalar(h.cast<std::complex<double>>());
  }
  return Scalar(py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>());
}

// An int's text for an error: its digits, or its size when they would be too many to read (or
// more than Python's int-to-str limit allows).
std::string int_text(PyObject* o) {
  int64_t bits = static_cast<int64_t>(_PyLong_NumBits(o));
  if (bits >= 0 && bits <= 256) {
    if (PyObject* text = PyObject_Str(o)) {
      std::string out = py::reinterpret_steal<py::str>(text);
      return out;
    }
    PyErr_Clear();
  }
  if (bits < 0) PyErr_Clear();
  return std::string(_PyLong_Sign(o) < 0 ? "a negative" : "an") + " int of " +
         std::to_string(bits) + " bits";
}

}  // namespace

IntOverflowError::IntOverflowError(std::string value, const std::string& where)
    : Error("Overflow when unpacking long: " + value + " does not fit in int64" +
            (where.empty() ? "" : " (" + where + ")")),
      value_(std::move(value)) {}

int64_t int64_of(py::handle int_object) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(int_object.ptr(), &overflow);
  if (overflow != 0) throw IntOverflowError(int_text(int_object.ptr()));
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<int64_t>(v);
}

// Note [Fast pybind11 instances]: what type_caster_generic::cast and class_::init_instance do
// for a new pointer, without their two type lookups and the search for an existing instance.
// Nor is the instance registered: pybind11 registers an instance by its value pointer so that
// casting that pointer back to Python finds the same object, but no tensor pointer or
// reference is ever cast back (every tensor reaches Python through wrap), and clear_instance
// deregisters only what was registered. That is a hash insertion and erasure per tensor.
py::object wrap(Tensor t) {
  if (!t.defined()) return py::none();
  // A wrapper subclass's tensor comes back as its subclass object (Note [Wrapper subclasses]).
  if (t.key_set().has(DispatchKey::Python)) [[unlikely]] {
    if (py::object o = subclass_object(t)) return o;
  }
  return wrap_as(std::move(t), tensor_type());
}

py::object wrap_as(Tensor t, PyTypeObject* type) {
  static const py::detail::type_info* info = py::detail::get_type_info(typeid(Tensor));
  auto value = std::make_unique<Tensor>(std::move(t));
  // make_new_instance less allocate_layout's lookup of the type's pybind11 bases: the Tensor
  // class has one, and its holder fits in place (pybind11's simple layout, set as
  // allocate_layout sets it).
  static_assert(sizeof(std::unique_ptr<Tensor>) <=
                sizeof(void*) * py::detail::instance_simple_holder_in_ptrs());
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) throw py::error_already_set();
  py::object obj = py::reinterpret_steal<py::object>(self);
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  inst->simple_layout = true;
  inst->simple_value_holder[0] = nullptr;
  inst->simple_holder_constructed = false;
  inst->simple_instance_registered = false;
  py::detail::value_and_holder v_h = inst->get_value_and_holder(info);
  v_h.value_ptr() = value.get();
  inst->owned = true;
  new (std::addressof(v_h.holder<std::unique_ptr<Tensor>>()))
      std::unique_ptr<Tensor>(std::move(value));
  v_h.set_holder_constructed();
  return obj;
}

bool is_tensor_object(py::handle h) {
  PyTypeObject* type = Py_TYPE(h.ptr());
  return type == tensor_type() || PyType_IsSubtype(type, tensor_type());
}

const Tensor* unwrap(py::handle h) {
  if (!is_tensor_object(h)) return nullptr;
  auto* inst = reinterpret_cast<py::detail::instance*>(h.ptr());
  return static_cast<const Tensor*>(inst->get_value_and_holder().value_ptr());
}

const Tensor& unwrap_or_throw(py::handle h, const char* what) {
  const Tensor* t = unwrap(h);
  if (!t) throw TypeError(std::string(what) + " must be Tensor, not " + type_name(h));
  return *t;
}

bool requires_grad_of(const Tensor& t) {
  if (!t.unsafe_get_impl()->autograd_meta()) return false;
  py::gil_scoped_release r;
  return t.requires_grad();
}

std::string type_name(py::handle h) { return Py_TYPE(h.ptr())->tp_name; }

std::optional<ScalarType> as_dtype(py::handle h) {
  if (py::isinstance<DType>(h)) return h.cast<const DType&>().type;
  return std::nullopt;
}

std::optional<Device> as_device(py::handle h) {
  if (py::isinstance<Device>(h)) return h.cast<Device>();
  if (PyUnicode_Check(h.ptr())) return Device(h.cast<std::string>());
  return std::nullopt;
}

std::optional<Scalar> as_scalar(py::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) return Scalar(int64_of(h));
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) {
    return Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
  }
  if (unwrap(h) != nullptr) return std::nullopt;
  // numpy's numbers (np.float32(2), np.bool_...) are the Python number their item() gives
  // (np.bool_'s deprecated __index__ would make it an int).
  if (is_numpy_number(h)) return numpy_number(h);
  // Integers of other kinds have __index__; so have numpy's arrays, whose __index__ refuses any
  // but a one-element integer array.
  if (PyIndex_Check(o)) {
    py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(o));
    if (i) return as_scalar(i);
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
    PyErr_Clear();
  }
  return std::nullopt;
}

std::optional<Scalar> as_number_operand(py::handle h) {
  if (auto s = as_scalar(h)) return s;
  if (is_numpy_0d_number(h)) return numpy_number(h);
  return std::nullopt;
}

IValue to_ivalue(py::handle h) {
  PyObject* o = h.ptr();
  if (const Tensor* t = unwrap(h)) return IValue(*t);
  if (o == Py_None) return IValue();
  if (PyList_Check(o) || PyTuple_Check(o)) {
    std::vector<IValue> items;
    py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
    items.reserve(seq.size());
    for (py::handle item : seq) items.push_back(to_ivalue(item));
    return IValue::make_generic_list(std::move(items));
  }
  if (PyUnicode_Check(o)) return IValue(h.cast<std::string>());
  if (auto s = as_scalar(h)) return IValue(*s);
  if (auto d = as_dtype(h)) return IValue(*d);
  if (py::isinstance<Device>(h)) return IValue(h.cast<Device>());
  if (py::isinstance<LayoutObject>(h)) return IValue(h.cast<const LayoutObject&>().layout);
  if (py::isinstance<MemoryFormatObject>(h)) {
    return IValue(h.cast<const MemoryFormatObject&>().format);
  }
  if (py::isinstance<Generator>(h)) return IValue(h.cast<const Generator&>());
  throw TypeError("opdispatch: cannot pass a " + type_name(h) + " to an operator");
}

py::object from_ivalue(IValue v) {
  auto list_of = [](const auto& xs) {
    py::list out;
    for (const auto& x : xs) out.append(from_ivalue(IValue(x)));
    return out;
  };
  switch (v.tag()) {
    case IValue::Tag::None:
      return py::none();
    case IValue::Tag::Tensor:
      return wrap(std::move(v).to_tensor());
    case IValue::Tag::Bool:
      return py::bool_(v.to_bool());
    case IValue::Tag::Int:
      return py::int_(v.to_int());
    case IValue::Tag::Double:
      return py::float_(v.to_double());
    case IValue::Tag::ComplexDouble:
      return py::cast(v.to_complex_double());
    case IValue::Tag::String:
      return py::str(v.to_string_ref());
    case IValue::Tag::ScalarType:
      return dtype_object(v.to_scalar_type());
    case IValue::Tag::Layout:
      return py::cast(LayoutObject{v.to_layout()});
    case IValue::Tag::MemoryFormat:
      return py::cast(MemoryFormatObject{v.to_memory_format()});
    case IValue::Tag::Device:
      return py::cast(v.to_device());
    case IValue::Tag::IntList:
      return list_of(v.to_int_list());
    case IValue::Tag::DoubleList:
      return list_of(v.to_double_list());
    case IValue::Tag::BoolList: {
      py::list out;
      for (bool b : v.to_bool_list()) out.append(py::bool_(b));
      return out;
    }
    case IValue::Tag::TensorList:
      return list_of(v.to_tensor_list());
    case IValue::Tag::OptionalTensorList: {
      py::list out;
      for (const auto& t : v.to_optional_tensor_list()) {
        out.append(t ? wrap(*t) : py::none());
      }
      return out;
    }
    case IValue::Tag::GenericList:
      return list_of(v.to_generic_list());
    case IValue::Tag::Capsule:
      if (v.is_generator()) return py::cast(v.to_generator());
      break;
    case IValue::Tag::Tuple: {
      const auto& items = v.to_tuple();
      py::tuple out(items.size());
      for (size_t i = 0; i < items.size(); ++i) out[i] = from_ivalue(items[i]);
      return out;
    }
    default:
      break;
  }
  throw TypeError(std::string("opdispatch: a ") + v.tag_name() + " value has no Python form");
}

}  // namespace opd::python
