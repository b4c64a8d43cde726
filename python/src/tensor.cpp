// opdispatch.Tensor: one opd::Tensor per Python object. Metadata is read with the GIL held (no
// dispatch); every operator is called with the GIL released (Note [The GIL and the
// dispatcher's locks] in module.cpp). The arithmetic dunders call the typed API directly, one
// function per dunder that switches on the other operand (Tensor, Python number, or
// NotImplemented), as torch's; + - * / are number slots (Note [Type slots]). Methods not bound
// here are the schemas' (opdispatch/_tensor.py).
// As torch's Python bindings, a number operand of + - * / is a wrapped number passed to the
// .Tensor overload (so `x + 1` records AddBackward0), while ** and the comparisons take the
// .Scalar overloads. The conversions by dtype name (x.int(), x.float()) are here too, for a
// small call's speed; % // & | ^ ~ << >> are opdispatch/_tensor.py's.

#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "default_device.h"
#include "opd/autograd.h"
#include "opd/bind/print.h"
#include "opd/bind/tensor_values.h"
#include "opd/generator.h"
#include "opd/ops.h"
#include "python_dispatch.h"
#include "slots.h"

namespace py = pybind11;

namespace opd::python {
namespace {

using Release = py::gil_scoped_release;

// The `dim` of size(dim) and stride(dim): an int (or an object with __index__, not a bool),
// in int64. Otherwise the TypeError torch's argument parser raises for a function of one
// signature; torch's own size and stride have a second, named-dimension signature (no named
// tensors here), so torch answers x.size("a") with "Name 'a' not found" instead.
int64_t dim_argument(py::handle dim, const char* method) {
  OPD_CHECK_T(TypeError, !PyBool_Check(dim.ptr()) && PyIndex_Check(dim.ptr()),
              "{}(): argument 'dim' (position 1) must be int, not {}", method, type_name(dim));
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(dim.ptr()));
  if (!index) throw py::error_already_set();
  try {
    return int64_of(index);
  } catch (const IntOverflowError& e) {
    throw IntOverflowError(e.value(), std::string(method) + "(), argument 'dim'");
  }
}

// The left operand of a reflected operator (2 - x, 2 / x, 2 ** x): the binder's, as opd eval's.
using bind::wrapped_number;

// One binary dunder: Tensor op Tensor, Tensor op number, or NotImplemented.
// `self_obj` is a handle, not a `const Tensor&`: pybind11 would look the type up by its
// std::type_index to load it, on every call (unwrap compares the type object).
template <class TensorFn, class ScalarFn>
py::object binary(py::handle self_obj, py::handle other, TensorFn on_tensor, ScalarFn on_scalar) {
  const Tensor& self = unwrap_or_throw(self_obj, "self");
  if (const Tensor* o = unwrap(other)) {
    Tensor out;
    {
      Release r;
      out = on_tensor(self, *o);
    }
    return wrap(std::move(out));
  }
  if (auto s = as_number_operand(other)) {
    Tensor out;
    {
      Release r;
      out = on_scalar(self, *s);
    }
    return wrap(std::move(out));
  }
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

// An in-place dunder: returns the same object (x += y keeps id(x)).
template <class TensorFn, class ScalarFn>
py::object inplace(py::handle self_obj, py::handle other, TensorFn on_tensor, ScalarFn on_scalar) {
  const Tensor& self = unwrap_or_throw(self_obj, "self");
  if (const Tensor* o = unwrap(other)) {
    Release r;
    on_tensor(self, *o);
  } else if (auto s = as_number_operand(other)) {
    Release r;
    on_scalar(self, *s);
  } else {
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  }
  return py::reinterpret_borrow<py::object>(self_obj);
}

// One arithmetic operator as the number slots serve it (Note [Type slots]): `Op::tensor` and
// `Op::scalar` compute self op other, `Op::reflected(self, s)` computes s op self, `Op::inplace`
// and `Op::inplace_scalar` self op= other.
template <class Op>
struct NumberSlots {
  // a op b, called for a's type or b's: b.__radd__(a) when `a` is not a tensor.
  static PyObject* binary_slot(PyObject* a, PyObject* b) noexcept {
    return slot_call([&] {
      if (is_tensor_object(a)) return binary(a, b, Op::tensor, Op::scalar);
      return binary(
          b, a, [](const Tensor& self, const Tensor& other) { return Op::tensor(other, self); },
          Op::reflected);
    });
  }
  static PyObject* inplace_slot(PyObject* a, PyObject* b) noexcept {
    return slot_call([&] { return inplace(a, b, Op::inplace, Op::inplace_scalar); });
  }
};

struct Add {
  static Tensor tensor(const Tensor& x, const Tensor& y) { return opd::add(x, y); }
  static Tensor scalar(const Tensor& x, const Scalar& s) { return opd::add(x, wrapped_number(s)); }
  static Tensor reflected(const Tensor& x, const Scalar& s) {
    return opd::add(x, wrapped_number(s));
  }
  static void inplace(const Tensor& x, const Tensor& y) { x.add_(y); }
  static void inplace_scalar(const Tensor& x, const Scalar& s) { x.add_(wrapped_number(s)); }
};
struct Sub {
  static Tensor tensor(const Tensor& x, const Tensor& y) { return opd::sub(x, y); }
  static Tensor scalar(const Tensor& x, const Scalar& s) { return opd::sub(x, wrapped_number(s)); }
  static Tensor reflected(const Tensor& x, const Scalar& s) {
    return opd::sub(wrapped_number(s), x);
  }
  static void inplace(const Tensor& x, const Tensor& y) { x.sub_(y); }
  static void inplace_scalar(const Tensor& x, const Scalar& s) { x.sub_(wrapped_number(s)); }
};
struct Mul {
  static Tensor tensor(const Tensor& x, const Tensor& y) { return opd::mul(x, y); }
  static Tensor scalar(const Tensor& x, const Scalar& s) { return opd::mul(x, wrapped_number(s)); }
  static Tensor reflected(const Tensor& x, const Scalar& s) {
    return opd::mul(x, wrapped_number(s));
  }
  static void inplace(const Tensor& x, const Tensor& y) { x.mul_(y); }
  static void inplace_scalar(const Tensor& x, const Scalar& s) { x.mul_(wrapped_number(s)); }
};
struct Div {
  static Tensor tensor(const Tensor& x, const Tensor& y) { return opd::div(x, y); }
  static Tensor scalar(const Tensor& x, const Scalar& s) { return opd::div(x, wrapped_number(s)); }
  static Tensor reflected(const Tensor& x, const Scalar& s) {
    return opd::div(wrapped_number(s), x);
  }
  static void inplace(const Tensor& x, const Tensor& y) { x.div_(y); }
  static void inplace_scalar(const Tensor& x, const Scalar& s) { x.div_(wrapped_number(s)); }
};

// Before PyType_Ready (Note [Type slots]); x[i] too (Note [Single indices] in indexing.cpp).
void set_type_slots(PyHeapTypeObject* type) {
  type->as_mapping.mp_subscript = &tensor_subscript;
  PyNumberMethods& n = type->as_number;
  n.nb_add = &NumberSlots<Add>::binary_slot;
  n.nb_inplace_add = &NumberSlots<Add>::inplace_slot;
  n.nb_subtract = &NumberSlots<Sub>::binary_slot;
  n.nb_inplace_subtract = &NumberSlots<Sub>::inplace_slot;
  n.nb_multiply = &NumberSlots<Mul>::binary_slot;
  n.nb_inplace_multiply = &NumberSlots<Mul>::inplace_slot;
  n.nb_true_divide = &NumberSlots<Div>::binary_slot;
  n.nb_inplace_true_divide = &NumberSlots<Div>::inplace_slot;
}

py::object scalar_to_python(const Scalar& s) {
  if (s.is_boolean()) return py::bool_(s.to_bool());
  if (s.is_integral(false)) return py::int_(s.to_int64());
  if (s.is_complex()) return py::cast(s.to_complex_double());
  return py::float_(s.to_double());
}

// The value of a one-element tensor for item(), float(), int(), complex(): torch's ValueError
// otherwise.
Scalar one_element(const Tensor& t) {
  OPD_CHECK_T(ValueError, t.numel() == 1,
              "only one element tensors can be converted to Python scalars");
  Release r;
  return t.item();
}

// bool(): torch's RuntimeError for any other number of elements.
bool truth_value(const Tensor& t) {
  OPD_CHECK(t.numel() == 1, "Boolean value of Tensor with {} is ambiguous",
            t.numel() == 0 ? "no values" : "more than one value");
  Release r;
  return t.item().to_bool();
}

py::tuple int_tuple(IntArrayRef xs) {
  py::tuple out(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) out[i] = py::int_(xs[i]);
  return out;
}

py::object nested_list(const bind::HostValues& h, size_t dim, int64_t& next) {
  if (dim == h.sizes.size()) {
    int64_t k = next++;
    switch (h.kind) {
      case bind::HostValues::Kind::Bool:
        return py::bool_(h.ints[k] != 0);
      case bind::HostValues::Kind::Int:
        return py::int_(h.ints[k]);
      case bind::HostValues::Kind::Float:
        return py::float_(h.reals[k]);
      case bind::HostValues::Kind::Complex:
        return py::cast(std::complex<double>(h.reals[k], h.imags[k]));
    }
  }
  py::list out;
  for (int64_t i = 0; i < h.sizes[dim]; ++i) out.append(nested_list(h, dim + 1, next));
  return out;
}

py::object tolist(const Tensor& t) {
  OPD_CHECK(!t.is_meta(), "Cannot copy out of meta tensor; no data!");
  check_not_wrapper_subclass(t, ".tolist()");
  bind::HostValues h;
  {
    Release r;
    h = bind::read_values(t);
  }
  int64_t next = 0;
  return nested_list(h, 0, next);
}

// x.int(), x.float(), ...: to(dtype) with torch's rule that a tensor already of that dtype is
// returned itself (the same Python object); otherwise a differentiable copy (to.dtype). The
// optional keyword `memory_format` is to()'s.
py::object convert_to(py::handle self_obj, ScalarType dtype, py::handle memory_format) {
  const Tensor& self = unwrap_or_throw(self_obj, "self");
  std::optional<MemoryFormat> format;
  if (!memory_format.is_none()) {
    OPD_CHECK_T(TypeError, py::isinstance<MemoryFormatObject>(memory_format),
                "argument 'memory_format' must be opdispatch.memory_format, not {}",
                type_name(memory_format));
    format = memory_format.cast<const MemoryFormatObject&>().format;
  }
  if (self.scalar_type() == dtype && (!format || *format == MemoryFormat::Preserve)) {
    return py::reinterpret_borrow<py::object>(self_obj);
  }
  Tensor out;
  {
    Release r;
    out = self.to(dtype, /*non_blocking=*/false, /*copy=*/false, format);
  }
  return wrap(std::move(out));
}

// Conversions by dtype name, as torch's Tensor methods: x.int(), x.float(memory_format=...).
struct Conversion {
  const char* name;
  ScalarType dtype;
};
constexpr Conversion kConversions[] = {
    {"bool", kBool},   {"byte", kByte},     {"char", kChar},           {"short", kShort},
    {"int", kInt},     {"long", kLong},     {"half", kHalf},           {"bfloat16", kBFloat16},
    {"float", kFloat}, {"double", kDouble}, {"cfloat", kComplexFloat}, {"cdouble", kComplexDouble}};

// Note [C methods]
// A method bound by pybind11 goes through its function dispatcher on every call (a type lookup
// to load self, argument vectors, the kwargs dict): most of x.int()'s time on a small tensor. A
// CPython method descriptor (METH_FASTCALL | METH_KEYWORDS) is called by the method-call opcodes
// with self first and no tuple, dict or bound method made; it checks self's type itself, with
// CPython's "descriptor 'int' for 'Tensor' objects doesn't apply to a 'str' object". Its
// argument errors are torch's.
template <size_t I>
PyObject* conversion_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) noexcept {
  return slot_call([&] {
    const Conversion& c = kConversions[I];
    if (nargs != 0) {
      throw TypeError(fmt::format("{}() takes 0 positional arguments but {} {} given", c.name,
                                  nargs, nargs == 1 ? "was" : "were"));
    }
    py::handle memory_format = py::none();
    for (Py_ssize_t i = 0; kwnames != nullptr && i < PyTuple_GET_SIZE(kwnames); ++i) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, i);
      if (PyUnicode_CompareWithASCIIString(key, "memory_format") != 0) {
        throw TypeError(fmt::format("{}() got an unexpected keyword argument '{}'", c.name,
                                    PyUnicode_AsUTF8(key)));
      }
      memory_format = args[i];
    }
    if (!memory_format.is_none() && !py::isinstance<MemoryFormatObject>(memory_format)) {
      throw TypeError(
          fmt::format("{}(): argument 'memory_format' must be opdispatch.memory_format, not {}",
                      c.name, type_name(memory_format)));
    }
    return convert_to(self, c.dtype, memory_format);
  });
}

template <size_t... I>
void bind_conversions(py::class_<Tensor>& cls, std::index_sequence<I...>) {
  // Static: a method descriptor keeps a pointer to its PyMethodDef.
  static PyMethodDef defs[] = {
      {kConversions[I].name,
       reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&conversion_method<I>)),
       METH_FASTCALL | METH_KEYWORDS, nullptr}...};
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  for (PyMethodDef& def : defs) {
    py::object descriptor = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, &def));
    if (!descriptor) throw py::error_already_set();
    cls.attr(def.ml_name) = descriptor;
  }
}

// The node that made a tensor, as torch's grad_fn: its name and repr only.
struct GradFn {
  std::string name;
};

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<GradFn>(m, "_GradFn", py::module_local())
      .def("name", [](const GradFn& g) { return g.name; })
      .def("__repr__", [](const GradFn& g) { return "<" + g.name + " object>"; });

  py::class_<Tensor> cls(m, "Tensor", py::module_local(), py::custom_type_setup(&set_type_slots));
  // Python's own messages ("unsupported operand type(s) for +: 'Tensor' and 'str'") name a type
  // by tp_name, which pybind11 sets to "opdispatch._C.Tensor"; torch's say 'Tensor'.
  reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_name = "Tensor";
  cls.attr("__array_priority__") = 1000;
  cls.def("__repr__",
          [](const Tensor& t) {
            check_not_wrapper_subclass(t, ".tolist()");  // as torch's repr, which calls tolist
            Release r;
            return bind::tensor_repr(t, "opdispatch");
          })
      .def("__hash__",
           [](const Tensor& t) { return reinterpret_cast<intptr_t>(t.unsafe_get_impl()); })
      // Metadata: no dispatch.
      .def("dim", &Tensor::dim)
      .def("ndimension", &Tensor::dim)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("_sizes", [](const Tensor& t) { return int_tuple(t.sizes()); })
      .def(
          "stride",
          [](const Tensor& t, py::handle dim) -> py::object {
            if (dim.is_none()) return int_tuple(t.strides());
            return py::int_(t.stride(dim_argument(dim, "stride")));
          },
          py::arg("dim") = py::none())
      .def("_size_of",
           [](const Tensor& t, py::handle dim) { return t.size(dim_argument(dim, "size")); })
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("is_cpu", &Tensor::is_cpu)
      .def_property_readonly("is_cuda", &Tensor::is_cuda)
      .def_property_readonly("is_meta", &Tensor::is_meta)
      .def("is_contiguous", [](const Tensor& t, py::args, py::kwargs) { return t.is_contiguous(); })
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("storage_offset", &Tensor::storage_offset)
      .def("element_size", &Tensor::element_size)
      .def_property_readonly("itemsize", &Tensor::element_size)
      .def_property_readonly("nbytes", [](const Tensor& t) { return t.numel() * t.element_size(); })
      .def_property_readonly("_version", &Tensor::version)
      .def("is_floating_point", [](const Tensor& t) { return is_floating_point(t.dtype()); })
      .def("is_complex", [](const Tensor& t) { return is_complex(t.dtype()); })
      .def("_is_same", [](const Tensor& a, const Tensor& b) { return a.is_same(b); })
      .def("_use_count", &Tensor::use_count)
      // Values.
      .def("item", [](const Tensor& t) { return scalar_to_python(one_element(t)); })
      .def("tolist", &tolist)
      .def("__bool__", &truth_value)
      .def("__float__", [](const Tensor& t) { return one_element(t).to_double(); })
      .def("__int__", [](const Tensor& t) { return one_element(t).to_int64(); })
      .def("__complex__", [](const Tensor& t) { return one_element(t).to_complex_double(); })
      .def("__index__",
           [](const Tensor& t) {
             OPD_CHECK_T(TypeError, is_integral(t.dtype(), true) && t.numel() == 1,
                         "only integer tensors of a single element can be converted to an index");
             return one_element(t).to_int64();
           })
      .def("__len__",
           [](const Tensor& t) {
             OPD_CHECK_T(TypeError, t.dim() > 0, "len() of a 0-d tensor");
             return t.size(0);
           })
      // Arithmetic, with torch's operand rules: + - * / and their in-place forms are the
      // type's number slots (Note [Type slots]), set in bind_tensor's custom_type_setup.
      .def("__pow__",
           [](py::handle a, py::handle b) {
             return binary(
                 a, b, [](const Tensor& x, const Tensor& y) { return opd::pow(x, y); },
                 [](const Tensor& x, const Scalar& s) { return opd::pow(x, s); });
           })
      .def("__rpow__",
           [](py::handle a, py::handle b) {
             return binary(
                 a, b, [](const Tensor& x, const Tensor& y) { return opd::pow(y, x); },
                 [](const Tensor& x, const Scalar& s) { return opd::pow(wrapped_number(s), x); });
           })
      .def("__matmul__",
           [](const Tensor& a, py::handle b) -> py::object {
             const Tensor* o = unwrap(b);
             if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             Tensor out;
             {
               Release r;
               out = opd::matmul(a, *o);
             }
             return wrap(std::move(out));
           })
      .def("__rmatmul__",
           [](const Tensor& a, py::handle b) -> py::object {
             const Tensor* o = unwrap(b);
             if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             Tensor out;
             {
               Release r;
               out = opd::matmul(*o, a);
             }
             return wrap(std::move(out));
           })
      .def("__neg__",
           [](const Tensor& a) {
             Tensor out;
             {
               Release r;
               out = opd::neg(a);
             }
             return wrap(std::move(out));
           })
      .def("__pos__", [](py::handle self) { return py::reinterpret_borrow<py::object>(self); })
      .def("__abs__", [](const Tensor& a) {
        Tensor out;
        {
          Release r;
          out = opd::abs(a);
        }
        return wrap(std::move(out));
      });

#define OPD_COMPARISON(dunder, fn)                                            \
  cls.def(dunder, [](py::handle a, py::handle b) {                            \
    return binary(                                                            \
        a, b, [](const Tensor& x, const Tensor& y) { return opd::fn(x, y); }, \
        [](const Tensor& x, const Scalar& s) { return opd::fn(x, s); });      \
  })
  OPD_COMPARISON("__eq__", eq);
  OPD_COMPARISON("__ne__", ne);
  OPD_COMPARISON("__lt__", lt);
  OPD_COMPARISON("__le__", le);
  OPD_COMPARISON("__gt__", gt);
  OPD_COMPARISON("__ge__", ge);
#undef OPD_COMPARISON

  // Autograd (the autograd plugin answers these through the dispatcher).
  // A bool only, not an int or numpy.bool_, with torch's two errors.
  cls.def_property("requires_grad", &requires_grad_of,
                   [](const Tensor& t, py::handle b) {
                     OPD_CHECK(PyBool_Check(b.ptr()), "requires_grad must be a bool");
                     Release r;
                     t.requires_grad_(b.ptr() == Py_True);
                   })
      .def(
          "requires_grad_",
          [](py::handle self, py::handle b) {
            OPD_CHECK_T(TypeError, PyBool_Check(b.ptr()),
                        "requires_grad_(): argument 'requires_grad' (position 1) must be bool, "
                        "not {}",
                        type_name(b));
            {
              Release r;
              unwrap_or_throw(self, "self").requires_grad_(b.ptr() == Py_True);
            }
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("requires_grad") = true)
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            if (!t.unsafe_get_impl()->autograd_meta()) return py::none();
            Tensor g;
            {
              Release r;
              g = t.grad();
            }
            return wrap(std::move(g));
          },
          [](const Tensor& t, py::handle g) {
            Tensor grad;
            if (!g.is_none()) grad = unwrap_or_throw(g, "assigned grad");
            Release r;
            autograd::set_grad(t, grad);
          })
      .def_property_readonly("grad_fn",
                             [](const Tensor& t) -> py::object {
                               if (!t.unsafe_get_impl()->autograd_meta()) return py::none();
                               std::string name;
                               {
                                 Release r;
                                 name = autograd::grad_fn_name(t);
                               }
                               if (name.empty()) return py::none();
                               return py::cast(GradFn{name});
                             })
      .def_property_readonly("is_leaf",
                             [](const Tensor& t) {
                               if (!t.unsafe_get_impl()->autograd_meta()) return true;
                               Release r;
                               return t.is_leaf();
                             })
      .def("retain_grad",
           [](const Tensor& t) {
             Release r;
             t.retain_grad();
           })
      .def("detach",
           [](const Tensor& t) {
             Tensor out;
             {
               Release r;
               out = t.detach();
             }
             return wrap(std::move(out));
           })
      .def("_backward",
           [](const Tensor& t, std::vector<Tensor> inputs, std::optional<Tensor> gradient,
              std::optional<bool> retain_graph, bool create_graph) {
             Release r;
             opd::_backward(t, inputs, gradient, retain_graph, create_graph);
           });
  bind_conversions(cls, std::make_index_sequence<std::size(kConversions)>());  // Note [C methods]
  bind_indexing(cls);

  // A Python number as the operand of a reflected operator (2 // x): a wrapped number, which
  // takes part in type promotion as a Python number does (opdispatch/_tensor.py's dunders).
  m.def("_wrapped_number", [](py::handle number) -> py::object {
    std::optional<Scalar> s = as_number_operand(number);
    if (!s) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return wrap(wrapped_number(*s));
  });
  m.def("_manual_seed", [](uint64_t seed) { opd::manual_seed(seed); });
  m.def("initial_seed", [] { return opd::initial_seed(); });
  m.def("_tensor_literal", [](py::handle data, py::handle dtype, py::handle device) {
    IValue v = to_ivalue(data);
    std::optional<ScalarType> dt = dtype.is_none() ? std::nullopt : as_dtype(dtype);
    OPD_CHECK_T(TypeError, dtype.is_none() || dt,
                "tensor(): argument 'dtype' must be "
                "opdispatch.dtype, not {}",
                type_name(dtype));
    std::optional<Device> dev = device.is_none() ? default_device() : as_device(device);
    OPD_CHECK_T(TypeError, device.is_none() || dev,
                "tensor(): argument 'device' must be "
                "opdispatch.device, not {}",
                type_name(device));
    Tensor t;
    {
      Release r;
      t = bind::make_tensor_literal(v, dt, dev);
    }
    return wrap(std::move(t));
  });
}

}  // namespace opd::python
