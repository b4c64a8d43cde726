// DLPack 0.6 (Debian's libdlpack-dev), zero-copy both ways, as torch 1.13 and numpy 1.24 speak
// it: Tensor.__dlpack__(stream=None) gives a "dltensor" capsule over the tensor's memory that
// owns the tensor's storage (so the memory, and the plugin that allocated it, live until the
// consumer calls the deleter, from any thread, whatever later happens to the tensor);
// from_dlpack(obj) takes an object with __dlpack__ or such a capsule, renames it
// "used_dltensor" and makes a tensor whose storage calls the producer's deleter when the last
// tensor on it goes. Both directions make the storage not resizable (Note [Resizable storage]
// in opd/storage.h), where torch 1.13 marks only an imported one and lets resize_ free memory
// an export still points to. Refusals, in torch's words where torch has them: bool (DLPack 0.6
// has no bool type), meta tensors (no memory), tensors that require grad, negative strides
// (torch 1.13 aborts on them), lanes other than 1.

#include <dlpack/dlpack.h>
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

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

[[noreturn]] void buffer_error(const std::string& msg) {
  PyErr_SetString(PyExc_BufferError, msg.c_str());
  throw py::error_already_set();
}

DLDataType dl_dtype(ScalarType t) {
  DLDataType d{};
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(element_size(t) * 8);
  switch (t) {
    case kByte:
      d.code = kDLUInt;
      break;
    case kChar:
    case kShort:
    case kInt:
    case kLong:
      d.code = kDLInt;
      break;
    case kHalf:
    case kFloat:
    case kDouble:
      d.code = kDLFloat;
      break;
    case kBFloat16:
      d.code = kDLBfloat;
      break;
    case kComplexFloat:
    case kComplexDouble:
      d.code = kDLComplex;
      break;
    case kBool:
      buffer_error("Bool type is not supported by DLPack 0.6; use Tensor.numpy() instead");
    default:
      buffer_error(std::string("opdispatch: no DLPack type for ") + to_string(t));
  }
  return d;
}

ScalarType scalar_type_of(DLDataType d) {
  OPD_CHECK_T(TypeError, d.lanes == 1, "opdispatch: DLPack tensors with {} lanes are not supported",
              d.lanes);
  switch (d.code) {
    case kDLUInt:
      if (d.bits == 8) return kByte;
      break;
    case kDLInt:
      if (d.bits == 8) return kChar;
      if (d.bits == 16) return kShort;
      if (d.bits == 32) return kInt;
      if (d.bits == 64) return kLong;
      break;
    case kDLFloat:
      if (d.bits == 16) return kHalf;
      if (d.bits == 32) return kFloat;
      if (d.bits == 64) return kDouble;
      break;
    case kDLBfloat:
      if (d.bits == 16) return kBFloat16;
      break;
    case kDLComplex:
      if (d.bits == 64) return kComplexFloat;
      if (d.bits == 128) return kComplexDouble;
      break;
    default:
      break;
  }
  throw TypeError("opdispatch: unsupported DLPack data type (code " + std::to_string(d.code) +
                  ", " + std::to_string(d.bits) + " bits)");
}

DLDevice dl_device(const Device& d) {
  if (d.is_cpu()) return {kDLCPU, 0};
  if (d.is_cuda()) return {kDLCUDA, d.has_index() ? d.index : 0};
  if (d.is_meta()) buffer_error("Can't export meta tensors over DLPack: they have no memory");
  buffer_error("opdispatch: DLPack has no device type for " + d.str());
}

// The manager context of an exported tensor.
struct Export {
  DLManagedTensor managed{};
  Storage storage;
  std::vector<int64_t> shape, strides;
};

void export_deleter(DLManagedTensor* m) { delete static_cast<Export*>(m->manager_ctx); }

void capsule_destructor(PyObject* capsule) {
  // A consumer renames the capsule when it takes it; only an unconsumed one is ours to free.
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;
  PyObject *type, *value, *trace;
  PyErr_Fetch(&type, &value, &trace);
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (m && m->deleter) m->deleter(m);
  PyErr_Restore(type, value, trace);
}

py::object to_dlpack(const Tensor& t) {
  check_not_wrapper_subclass(t, "__dlpack__()");
  OPD_CHECK(!requires_grad_of(t),
            "Can't export tensors that require gradient, use tensor.detach()");
  DLDevice device = dl_device(t.device());
  DLDataType dtype = dl_dtype(t.dtype());
  auto e = std::make_unique<Export>();
  e->storage = t.storage();
  e->storage.set_resizable(false);
  e->shape.assign(t.sizes().begin(), t.sizes().end());
  e->strides.assign(t.strides().begin(), t.strides().end());
  DLTensor& dl = e->managed.dl_tensor;
  dl.data = exported_data(e->storage, t);
  dl.device = device;
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = dtype;
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  dl.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = &export_deleter;
  PyObject* capsule = PyCapsule_New(&e->managed, kCapsuleName, &capsule_destructor);
  if (!capsule) throw py::error_already_set();
  e.release();
  return py::reinterpret_steal<py::object>(capsule);
}

void call_producer_deleter(void* ctx) {
  auto* m = static_cast<DLManagedTensor*>(ctx);
  if (m->deleter) m->deleter(m);
}

// The storage's deleter, on whatever thread drops the last tensor. A producer's deleter may take
// the GIL (numpy 1.24's does), so it runs where the GIL is held, through the release queue
// (Note [Python lifetime]): never waiting for the GIL here, and leaking rather than running
// once the interpreter is finalizing (3.11 would end this thread inside it).
void import_deleter(void*, void* ctx) { run_with_gil_later(&call_producer_deleter, ctx); }

Tensor from_capsule(py::handle capsule) {
  OPD_CHECK_T(TypeError, PyCapsule_CheckExact(capsule.ptr()),
              "from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {}",
              type_name(capsule));
  OPD_CHECK(PyCapsule_IsValid(capsule.ptr(), kCapsuleName),
            "from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
            "consumed only once, so you might have already constructed a tensor from it once.");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  const DLTensor& dl = m->dl_tensor;
  // Every check before taking ownership: on failure the capsule frees itself as before.
  ScalarType dtype = scalar_type_of(dl.dtype);
  Device device(DeviceType::CPU);
  if (dl.device.device_type == kDLCUDA) {
    device = Device(DeviceType::CUDA, static_cast<int8_t>(dl.device.device_id));
  } else {
    OPD_CHECK_T(TypeError, dl.device.device_type == kDLCPU || dl.device.device_type == kDLCUDAHost,
                "opdispatch: unsupported DLPack device type {}",
                static_cast<int>(dl.device.device_type));
  }
  std::vector<int64_t> sizes(dl.shape, dl.shape + dl.ndim);
  std::vector<int64_t> strides = dl.strides ? std::vector<int64_t>(dl.strides, dl.strides + dl.ndim)
                                            : contiguous_strides(sizes);
  for (int64_t s : strides) {
    OPD_CHECK_T(ValueError, s >= 0,
                "from_dlpack: tensors with negative strides are not supported (strides {})",
                fmt::format("{}", fmt::join(strides, ", ")));
  }
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  Tensor t = from_blob(data, sizes, strides, dtype, device, &import_deleter, m);
  PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);
  t.storage().set_resizable(false);
  return t;
}

}  // namespace

void bind_dlpack(py::module_& m) {
  m.def(
      "_to_dlpack",
      [](py::handle t, py::object stream) {
        const Tensor& tensor = unwrap_or_throw(t, "__dlpack__(): self");
        // torch's check, on every device.
        OPD_CHECK_T(TypeError, stream.is_none() || PyLong_Check(stream.ptr()),
                    "stream must be ``int`` or ``none``");
        // The CUDA plugin queues on the legacy default stream: None, -1 (no synchronisation asked)
        // and 1 (the legacy default stream) need no synchronisation; others are refused.
        if (tensor.is_cuda() && !stream.is_none()) {
          int64_t s = int64_of(stream);
          if (s != 1 && s != -1) {
            buffer_error(
                "opdispatch: __dlpack__ supports the legacy default CUDA stream (1) only; "
                "got stream " +
                std::to_string(s));
          }
        }
        return to_dlpack(tensor);
      },
      py::arg("tensor"), py::arg("stream") = py::none());
  m.def("_dlpack_device", [](py::handle t) {
    DLDevice d = dl_device(unwrap_or_throw(t, "__dlpack_device__(): self").device());
    return py::make_tuple(static_cast<int>(d.device_type), d.device_id);
  });
  m.def("_from_dlpack_capsule", [](py::handle c) { return wrap(from_capsule(c)); });
}

}  // namespace opd::python
