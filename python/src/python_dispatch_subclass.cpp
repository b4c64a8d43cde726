// Note [Wrapper subclasses]
// Tensor._make_wrapper_subclass(cls, size, ...) makes, as torch's does, a tensor with metadata
// only (sizes, strides, dtype, device; no memory) whose key set carries the Python keys
// (kPythonKeySet), wrapped in an object of `cls`, a Python subclass of opdispatch.Tensor with a
// __torch_dispatch__ classmethod. Operators on it dispatch as on any tensor (autograd records
// them first: Autograd is above Python) and reach the Python key's fallback, which, with no mode
// active, calls the handler this file sets (opd::set_python_subclass_handler): it takes the GIL
// and calls cls.__torch_dispatch__(func, types, args, kwargs) (call_torch_dispatch), so a C++
// thread dispatching on such a tensor holds the GIL only for that call.
//
// __torch_dispatch__ must receive the subclass objects, with their attributes (the wrapped
// `elem`), though the dispatcher carried only the C++ tensor. opdispatch keeps no Python object
// per TensorImpl (torch's PyObject preservation), so the wrapper's storage keeps what is needed
// to give one back: its deleter context is a SubclassState holding the class, the instance's
// __dict__ and a weak reference to the instance (the storage is recognised by its deleter).
// wrap() of a tensor with the Python key asks subclass_object(): the live instance when it is
// this tensor's, else a new instance of the class sharing the same __dict__ (so `elem` and any
// attribute set later are there), which becomes the one the weak reference follows. Holding the
// instance itself would be a cycle through C++ that the collector cannot see. Hence: identity
// holds while the instance lives; attributes kept in __slots__ instead of __dict__ do not come
// back once it is gone (keep a wrapper's state in its __dict__). The references go, through
// release_pyobject (any thread), when the storage does.

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convert.h"
#include "gil.h"
#include "opd/dispatch_mode.h"
#include "opd/layout.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opd::python {

namespace {

struct SubclassState {
  PyObject* cls = nullptr;      // strong
  PyObject* dict = nullptr;     // strong: the instance's __dict__; null for a class without one
  PyObject* weakref = nullptr;  // strong reference to a weak reference to the instance, or null
};

// The wrapper storage's deleter (it has no memory): drops the state's references from any
// thread.
void free_subclass_state(void*, void* ctx) {
  auto* s = static_cast<SubclassState*>(ctx);
  release_pyobject(s->cls);
  release_pyobject(s->dict);
  release_pyobject(s->weakref);
  delete s;
}

SubclassState* state_of(const Tensor& t) {
  StorageImpl* storage = t.storage().unsafe_get_impl();
  if (storage == nullptr || storage->deleter() != &free_subclass_state) return nullptr;
  return static_cast<SubclassState*>(storage->deleter_ctx());
}

// Records `obj` as the instance the state's weak reference follows. REQUIRES: the GIL.
void follow(SubclassState* s, py::handle obj) {
  if (Py_TYPE(obj.ptr())->tp_weaklistoffset == 0) return;
  PyObject* ref = PyWeakref_NewRef(obj.ptr(), nullptr);
  if (ref == nullptr) throw py::error_already_set();
  Py_XDECREF(s->weakref);
  s->weakref = ref;
}

// torch 1.13's keywords: memory_format is taken and ignored as torch's (the strides default to
// contiguous ones), pin_memory has nothing to pin (the wrapper has no memory); a layout other
// than strided, and sizes, strides or the device answered by Python, are not supported.
py::object make_wrapper_subclass(py::handle cls, const std::vector<int64_t>& size,
                                 std::optional<std::vector<int64_t>> strides,
                                 std::optional<int64_t> storage_offset, py::handle memory_format,
                                 py::handle dtype, py::handle layout, py::handle device,
                                 bool pin_memory, bool requires_grad,
                                 py::handle dispatch_sizes_strides_policy, bool dispatch_device) {
  (void)memory_format;
  (void)pin_memory;
  OPD_CHECK_T(NotImplementedError,
              layout.is_none() || (py::isinstance<LayoutObject>(layout) &&
                                   layout.cast<LayoutObject>().layout == Layout::Strided),
              "_make_wrapper_subclass: only the strided layout is supported, not {}",
              py::str(layout).cast<std::string>());
  OPD_CHECK_T(NotImplementedError, dispatch_sizes_strides_policy.is_none() && !dispatch_device,
              "_make_wrapper_subclass: dispatch_sizes_strides_policy and dispatch_device are not "
              "supported: sizes, strides and the device are the wrapper's own");
  OPD_CHECK_T(TypeError,
              PyType_Check(cls.ptr()) &&
                  PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), tensor_type()),
              "cls must be a subclass of Tensor, not {}", py::repr(cls).cast<std::string>());
  OPD_CHECK_T(TypeError, py::hasattr(cls, "__torch_dispatch__"),
              "{} must define __torch_dispatch__",
              reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_name);
  ScalarType type = kFloat;
  if (!dtype.is_none()) {
    auto d = as_dtype(dtype);
    OPD_CHECK_T(TypeError, d.has_value(), "dtype must be dtype, not {}", type_name(dtype));
    type = *d;
  }
  Device where(DeviceType::CPU);
  if (!device.is_none()) {
    auto d = as_device(device);
    OPD_CHECK_T(TypeError, d.has_value(), "device must be device, not {}", type_name(device));
    where = *d;
  }
  std::vector<int64_t> st = strides ? *strides : contiguous_strides(size);
  OPD_CHECK_T(ValueError, st.size() == size.size(),
              "_make_wrapper_subclass: {} strides for {} sizes", st.size(), size.size());
  const int64_t offset = storage_offset.value_or(0);
  // The bytes the geometry reaches, as make_tensor checks them; no memory behind them.
  int64_t extent = offset + 1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 0) {
      extent = 0;
      break;
    }
    extent += (size[i] - 1) * st[i];
  }
  auto state = std::make_unique<SubclassState>();
  Storage storage = Storage::create(
      nullptr, static_cast<size_t>(std::max<int64_t>(extent, 0)) * element_size(type), where,
      &free_subclass_state, state.get(), nullptr, /*resizable=*/false);
  SubclassState* s = state.release();  // the storage's now
  Tensor t = make_tensor(std::move(storage), size, st, offset, type, where);
  t.unsafe_get_impl()->unsafe_set_key_set(t.key_set() | kPythonKeySet);

  py::object obj = wrap_as(std::move(t), reinterpret_cast<PyTypeObject*>(cls.ptr()));
  s->cls = py::reinterpret_borrow<py::object>(cls).release().ptr();
  if (PyObject** dict = _PyObject_GetDictPtr(obj.ptr())) {
    if (*dict == nullptr) *dict = PyDict_New();
    if (*dict == nullptr) throw py::error_already_set();
    Py_INCREF(*dict);
    s->dict = *dict;
  }
  follow(s, obj);
  if (requires_grad) obj.attr("requires_grad_")(true);
  return obj;
}

}  // namespace

void check_not_wrapper_subclass(const Tensor& t, const char* what) {
  OPD_CHECK(state_of(t) == nullptr, "{} is not supported for tensor subclasses.", what);
}

// Never destroyed: see bind_python_dispatch_subclass.
RegistrationHandle* subclass_handler_registration = nullptr;

py::object subclass_object(const Tensor& t) {
  SubclassState* s = state_of(t);
  if (s == nullptr) return py::object();
  if (s->weakref != nullptr) {
    PyObject* live = PyWeakref_GetObject(s->weakref);  // borrowed; Py_None when gone
    if (live != Py_None) {
      const Tensor* held = unwrap(live);
      if (held != nullptr && held->unsafe_get_impl() == t.unsafe_get_impl()) {
        return py::reinterpret_borrow<py::object>(live);
      }
    }
  }
  py::object obj = wrap_as(t, reinterpret_cast<PyTypeObject*>(s->cls));
  if (s->dict != nullptr) {
    if (PyObject** dict = _PyObject_GetDictPtr(obj.ptr())) {
      Py_INCREF(s->dict);
      Py_XSETREF(*dict, s->dict);
    }
  }
  if (unwrap(obj)->unsafe_get_impl() == t.unsafe_get_impl()) follow(s, obj);
  return obj;
}

void bind_python_dispatch_subclass(py::module_& m) {
  py::object tensor = m.attr("Tensor");
  tensor.attr("_make_wrapper_subclass") = py::staticmethod(py::cpp_function(
      &make_wrapper_subclass, py::arg("cls"), py::arg("size"), py::kw_only(),
      py::arg("strides") = py::none(), py::arg("storage_offset") = py::none(),
      py::arg("memory_format") = py::none(), py::arg("dtype") = py::none(),
      py::arg("layout") = py::none(), py::arg("device") = py::none(), py::arg("pin_memory") = false,
      py::arg("requires_grad") = false, py::arg("dispatch_sizes_strides_policy") = py::none(),
      py::arg("dispatch_device") = false));
  // A subclass's __new__ returns the wrapper, and Python then calls __init__ on it with the same
  // arguments (torch's Tensor.__init__ takes and ignores them); a Tensor made otherwise still
  // has no constructor.
  tensor.attr("__init__") = py::cpp_function(
      [](py::handle self, const py::args&, const py::kwargs&) {
        if (unwrap(self) == nullptr) throw TypeError(type_name(self) + ": No constructor defined!");
      },
      py::is_method(tensor));
  // The Python key's fallback, with no mode active: the subclasses' __torch_dispatch__. Set once
  // for the life of the process (the handle is never destroyed; held by a global, which the
  // compiler keeps, so that LeakSanitizer sees the allocation reachable).
  if (subclass_handler_registration == nullptr) {
    subclass_handler_registration = new RegistrationHandle(set_python_subclass_handler(
        [](const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
          if (!call_torch_dispatch(op, stack, py::handle()))
            redispatch_below_python(op, keys, stack);
        }));
  }
}

}  // namespace opd::python
