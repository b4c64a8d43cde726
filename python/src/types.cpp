// opdispatch.dtype, opdispatch.device, opdispatch.layout and opdispatch.memory_format, with
// torch's names and reprs: opdispatch.float32 (alias opdispatch.float), device(type='cuda',
// index=0), opdispatch.strided, opdispatch.contiguous_format. A device is also a context
// manager: factories called inside `with opdispatch.device("meta"):` make meta tensors.

#include <pybind11/operators.h>
#include <pybind11/pybind11.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "default_device.h"
#include "opd/device_guard.h"
#include "opd/privateuse.h"

namespace py = pybind11;

namespace opd::python {
namespace {

// A device index given apart from its type, as torch.device takes it: an int (not a bool),
// not negative, in int64, then narrowed to the 8 bits of a device index as torch 1.13 narrows
// it (torch.device("cuda", 300) is cuda:44).
int8_t device_index(py::handle index, const char* which) {
  OPD_CHECK_T(TypeError, PyLong_Check(index.ptr()) && !PyBool_Check(index.ptr()),
              "Device(): {} must be int, not {}", which, type_name(index));
  const int64_t i = int64_of(index);
  OPD_CHECK(i >= 0, "Device index must not be negative");
  return static_cast<int8_t>(i);
}

constexpr ScalarType kAllScalarTypes[] = {
    kBool, kByte,     kChar,  kShort,  kInt,          kLong,
    kHalf, kBFloat16, kFloat, kDouble, kComplexFloat, kComplexDouble,
};

// One object per dtype, made once and never destroyed (module objects outlive nothing here).
std::array<PyObject*, kNumScalarTypes>& dtype_objects() {
  static std::array<PyObject*, kNumScalarTypes> objects{};
  return objects;
}

thread_local std::vector<Device> t_device_stack;

}  // namespace

py::object dtype_object(ScalarType t) {
  PyObject* o = dtype_objects()[static_cast<size_t>(t)];
  OPD_CHECK(o != nullptr, "opdispatch: no Python dtype for {}", to_string(t));
  return py::reinterpret_borrow<py::object>(o);
}

std::optional<Device> default_device() {
  if (t_device_stack.empty()) return std::nullopt;
  return t_device_stack.back();
}

void bind_types(py::module_& m) {
  py::class_<DType>(m, "dtype", py::module_local())
      .def_property_readonly("is_floating_point",
                             [](const DType& d) { return is_floating_point(d.type); })
      .def_property_readonly("is_complex", [](const DType& d) { return is_complex(d.type); })
      .def_property_readonly("is_signed",
                             [](const DType& d) { return d.type != kBool && d.type != kByte; })
      .def_property_readonly("itemsize", [](const DType& d) { return element_size(d.type); })
      .def("__repr__",
           [](const DType& d) { return std::string("opdispatch.") + python_name(d.type); })
      .def("__reduce__", [](const DType& d) { return std::string(python_name(d.type)); });
  // torch's names and aliases.
  const std::pair<const char*, ScalarType> aliases[] = {{"float", kFloat},
                                                        {"double", kDouble},
                                                        {"half", kHalf},
                                                        {"short", kShort},
                                                        {"int", kInt},
                                                        {"long", kLong},
                                                        {"cfloat", kComplexFloat},
                                                        {"cdouble", kComplexDouble}};
  for (ScalarType t : kAllScalarTypes) {
    py::object o = py::cast(DType{t});
    dtype_objects()[static_cast<size_t>(t)] = o.inc_ref().ptr();
    m.attr(python_name(t)) = o;
  }
  for (const auto& [name, t] : aliases) m.attr(name) = dtype_object(t);

  // torch._C's: the PrivateUse1 slot's name (opdispatch.utils.rename_privateuse1_backend checks
  // torch's conditions and texts first; opd::register_privateuse1_backend is the authority).
  m.def(
      "_rename_privateuse1_backend",
      [](const std::string& name) { register_privateuse1_backend(name); }, py::arg("backend_name"));
  m.def("_get_privateuse1_backend_name", [] { return privateuse1_backend_name(); });
  // The three vendor slots, numbered 1..3 as DeviceType::PrivateUse1..3 (opd/privateuse.h, Note
  // [Vendor slots]): opdispatch.utils.rename_privateuse_backend claims one for the process.
  auto slot_type = [](int slot) {
    if (slot < 1 || slot > 3) {
      throw ValueError(
          fmt::format("vendor slot {} does not exist: the slots are 1, 2 and 3", slot));
    }
    return static_cast<DeviceType>(static_cast<int>(DeviceType::PrivateUse1) + slot - 1);
  };
  m.def(
      "_register_privateuse_backend",
      [slot_type](const std::string& name, std::optional<int> slot) {
        std::optional<DeviceType> type;
        if (slot) type = slot_type(*slot);
        const DeviceType got = register_privateuse_backend(name, type);
        return static_cast<int>(got) - static_cast<int>(DeviceType::PrivateUse1) + 1;
      },
      py::arg("backend_name"), py::arg("slot") = py::none());
  m.def(
      "_get_privateuse_backend_name",
      [slot_type](int slot) { return privateuse_backend_name(slot_type(slot)); }, py::arg("slot"));
  m.def(
      "_privateuse_slot_holder",
      [slot_type](int slot) { return privateuse_slot_holder(slot_type(slot)); }, py::arg("slot"));
  // opd::ensure_has_index: a device without index as the current one of its type, where its
  // backend registered a device guard (opd/device_guard.h).
  m.def(
      "_ensure_has_index", [](const Device& d) { return ensure_has_index(d); }, py::arg("device"));

  py::class_<Device>(m, "device", py::module_local())
      .def(py::init([](const std::string& text) { return Device(text); }), py::arg("type"))
      .def(py::init([](const std::string& type, py::handle index) {
             Device d(type);
             OPD_CHECK_T(ValueError, !d.has_index(),
                         "type (string) must not include an index because index was passed "
                         "explicitly: {}",
                         type);
             return Device(d.type, device_index(index, "argument 'index' (position 2)"));
           }),
           py::arg("type"), py::arg("index"))
      .def(py::init([](const Device& d) { return d; }))
      // torch.device(0): an int alone is a CUDA device's index.
      .def(py::init([](py::handle index) {
             return Device(DeviceType::CUDA, device_index(index, "argument 'index' (position 1)"));
           }),
           py::arg("index"))
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d.type); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (!d.has_index()) return py::none();
                               return py::int_(d.index);
                             })
      .def("__str__", &Device::str)
      .def("__repr__",
           [](const Device& d) {
             std::string r = std::string("device(type='") + device_type_name(d.type) + "'";
             if (d.has_index()) r += ", index=" + std::to_string(d.index);
             return r + ")";
           })
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__eq__", [](const Device&, py::object) { return false; })
      .def("__hash__",
           [](const Device& d) {
             return std::hash<int>()(static_cast<int>(d.type) * 256 + d.index);
           })
      .def("__enter__",
           [](const Device& d) {
             t_device_stack.push_back(d);
             return d;
           })
      .def("__exit__", [](const Device&, py::args) {
        if (!t_device_stack.empty()) t_device_stack.pop_back();
        return false;
      });

  py::class_<LayoutObject>(m, "layout", py::module_local())
      .def("__repr__", [](const LayoutObject& l) {
        return std::string("opdispatch.") + python_name(l.layout);
      });
  for (Layout l : {Layout::Strided, Layout::Sparse, Layout::SparseCsr}) {
    m.attr(python_name(l)) = py::cast(LayoutObject{l});
  }
  py::class_<MemoryFormatObject>(m, "memory_format", py::module_local())
      .def("__repr__", [](const MemoryFormatObject& f) {
        return std::string("opdispatch.") + python_name(f.format);
      });
  for (MemoryFormat f : {MemoryFormat::Contiguous, MemoryFormat::Preserve,
                         MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d}) {
    m.attr(python_name(f)) = py::cast(MemoryFormatObject{f});
  }
}

}  // namespace opd::python
