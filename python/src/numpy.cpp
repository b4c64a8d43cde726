// Tensors and numpy, zero-copy both ways, as torch.from_numpy and Tensor.numpy().
// from_numpy (and frombuffer) take any object with the buffer protocol: the tensor's storage
// holds the Py_buffer, released through release_pyobject's queue (Note [Python lifetime]) when
// the last tensor or view on it goes, on whatever thread that is. numpy() makes an array over
// the tensor's memory whose base is a capsule owning the tensor's storage: the memory, and so
// the plugin that allocated it, stay alive as long as the array, whatever later happens to the
// tensor. Writable both ways. Both directions make the storage not resizable (Note [Resizable
// storage] in opd/storage.h): resize_ cannot move the tensor off memory numpy reads.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "gil.h"
#include "opd/error.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opd::python {
namespace {

// The buffer-protocol format of one element, without byte order: "f", "d", "q", "Zf", ...
std::optional<ScalarType> scalar_type_of_format(std::string_view format, size_t itemsize) {
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) {
    format.remove_prefix(1);
  } else if (!format.empty() && (format[0] == '>' || format[0] == '!')) {
    throw ValueError("opdispatch: the buffer's byte order is not native (format '" +
                     std::string(format) + "')");
  }
  if (format == "?") return kBool;
  if (format == "B") return kByte;
  if (format == "b") return kChar;
  if (format == "h") return kShort;
  if (format == "i" || (format == "l" && itemsize == 4)) return kInt;
  if (format == "q" || (format == "l" && itemsize == 8)) return kLong;
  if (format == "e") return kHalf;
  if (format == "f") return kFloat;
  if (format == "d") return kDouble;
  if (format == "Zf") return kComplexFloat;
  if (format == "Zd") return kComplexDouble;
  return std::nullopt;
}

const char* numpy_dtype_of(ScalarType t) {
  switch (t) {
    case kBool:
      return "?";
    case kByte:
      return "u1";
    case kChar:
      return "i1";
    case kShort:
      return "i2";
    case kInt:
      return "i4";
    case kLong:
      return "i8";
    case kHalf:
      return "f2";
    case kFloat:
      return "f4";
    case kDouble:
      return "f8";
    case kComplexFloat:
      return "c8";
    case kComplexDouble:
      return "c16";
    default:
      return nullptr;
  }
}

// The Py_buffer a storage holds; released (with the exporter's reference) by the queue.
struct HeldBuffer {
  Py_buffer view;
};

void release_buffer_with_gil(void* ctx) {
  auto* held = static_cast<HeldBuffer*>(ctx);
  PyBuffer_Release(&held->view);
  delete held;
}

// During the interpreter's teardown: the holder only (the exporter stays, as Python's own
// objects do then).
void discard_held_buffer(void* ctx) { delete static_cast<HeldBuffer*>(ctx); }

// The storage's deleter: any thread, with or without the GIL.
void release_held_buffer(void*, void* ctx) {
  run_with_gil_later(&release_buffer_with_gil, ctx, &discard_held_buffer);
}

}  // namespace

Tensor tensor_from_buffer(py::handle obj, bool warn_readonly) {
  auto held = std::make_unique<HeldBuffer>();
  if (PyObject_GetBuffer(obj.ptr(), &held->view, PyBUF_RECORDS_RO) != 0) {
    throw py::error_already_set();
  }
  struct Guard {
    HeldBuffer* h;
    ~Guard() {
      if (h) PyBuffer_Release(&h->view);
    }
  } guard{held.get()};
  const Py_buffer& v = held->view;
  std::string format = v.format ? v.format : "B";
  auto dtype = scalar_type_of_format(format, static_cast<size_t>(v.itemsize));
  if (!dtype) {
    // numpy's name of the type (numpy.uint16), as torch prints it; the buffer format otherwise.
    std::string name = format;
    if (py::hasattr(obj, "dtype")) {
      name =
          "numpy." + py::str(obj.attr("dtype").attr("type").attr("__name__")).cast<std::string>();
    }
    throw TypeError("can't convert np.ndarray of type " + name +
                    ". The only supported types are: float64, float32, float16, complex64, "
                    "complex128, int64, int32, int16, int8, uint8, and bool.");
  }
  std::vector<int64_t> sizes(v.shape, v.shape + v.ndim);
  std::vector<int64_t> strides(static_cast<size_t>(v.ndim));
  for (int i = 0; i < v.ndim; ++i) {
    OPD_CHECK_T(ValueError, v.strides[i] >= 0,
                "At least one stride in the given numpy array is negative, and tensors with "
                "negative strides are not currently supported. (You can probably work around "
                "this by making a copy of your array  with array.copy().) ");
    OPD_CHECK_T(ValueError, v.strides[i] % v.itemsize == 0,
                "given numpy array strides not a multiple of the element byte size. Copy the "
                "numpy array to reallocate the memory.");
    strides[static_cast<size_t>(i)] = v.strides[i] / v.itemsize;
  }
  if (v.readonly && warn_readonly) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "The given NumPy array is not writable, and PyTorch does not support "
                     "non-writable tensors. This means writing to this tensor will result in "
                     "undefined behavior. You may want to copy the array to protect its data or "
                     "make it writable before converting it to a tensor. This type of warning "
                     "will be suppressed for the rest of this program.",
                     1) != 0) {
      throw py::error_already_set();
    }
  }
  Tensor t = from_blob(v.buf, sizes, strides, *dtype, Device(DeviceType::CPU), &release_held_buffer,
                       held.get());
  guard.h = nullptr;
  held.release();
  t.storage().set_resizable(false);
  return t;
}

py::object tensor_to_numpy(const Tensor& t) {
  check_not_wrapper_subclass(t, ".numpy()");
  OPD_CHECK_T(TypeError, !t.is_meta(), "can't convert meta device type tensor to numpy.");
  OPD_CHECK_T(TypeError, t.is_cpu(),
              "can't convert {} device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
              "to host memory first.",
              t.device().str());
  OPD_CHECK(!requires_grad_of(t),
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
            "instead.");
  const char* code = numpy_dtype_of(t.dtype());
  OPD_CHECK_T(TypeError, code != nullptr, "Got unsupported ScalarType {}", to_string(t.dtype()));
  const auto item = static_cast<py::ssize_t>(t.element_size());
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t.strides()) strides.push_back(static_cast<py::ssize_t>(s) * item);
  // The storage, not the tensor: a resize or a new storage given to the tensor must not free
  // the memory under the array. Copied once, and the data pointer taken from that copy.
  auto storage = std::make_unique<Storage>(t.storage());
  storage->set_resizable(false);
  void* data = exported_data(*storage, t);
  py::capsule base(storage.release(), [](void* p) { delete static_cast<Storage*>(p); });
  return py::array(py::dtype(code), shape, strides, data, base);
}

void bind_numpy(py::module_& m) {
  m.def(
      "from_numpy", [](py::handle a) { return wrap(tensor_from_buffer(a, true)); },
      py::arg("ndarray"));
  m.def(
      "frombuffer", [](py::handle a) { return wrap(tensor_from_buffer(a, true)); },
      py::arg("buffer"));
  m.def("_from_buffer_quiet", [](py::handle a) { return wrap(tensor_from_buffer(a, false)); });
  m.def("_to_numpy", [](py::handle t) { return tensor_to_numpy(unwrap_or_throw(t, "numpy()")); });
}

}  // namespace opd::python
