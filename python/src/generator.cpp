// opdispatch.Generator and opdispatch.default_generator, as torch.Generator (Note [Generator
// objects] in opd/generator.h): a handle to a random state of its own, passed to any operator
// argument of type `Generator?`.

#include "opd/generator.h"

#include <pybind11/pybind11.h>

#include <cstring>

#include "bindings.h"
#include "opd/error.h"
#include "opd/ops.h"

namespace py = pybind11;

namespace opd::python {
namespace {

// torch's seeds: any int from -2**63 to 2**64 - 1, a negative one taken modulo 2**64.
uint64_t seed_of(py::handle seed) {
  py::int_ s = py::reinterpret_steal<py::int_>(PyNumber_Index(seed.ptr()));
  if (!s) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(s.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(v);
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(s.ptr());
    if (!PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  throw Error("Overflow when unpacking long");
}

}  // namespace

void bind_generator(py::module_& m) {
  py::class_<Generator>(m, "Generator", py::module_local())
      .def(py::init([](const Device& device) {
             OPD_CHECK(device.type == DeviceType::CPU,
                       "opdispatch.Generator: only a cpu generator exists, not {}", device.str());
             return Generator();
           }),
           py::arg("device") = Device(DeviceType::CPU))
      .def(py::init([](const std::string& device) {
             OPD_CHECK(Device(device).type == DeviceType::CPU,
                       "opdispatch.Generator: only a cpu generator exists, not {}", device);
             return Generator();
           }),
           py::arg("device"))
      .def(
          "manual_seed",
          [](Generator& g, py::handle seed) -> Generator& {
            g.manual_seed(seed_of(seed));
            return g;
          },
          py::arg("seed"), py::return_value_policy::reference_internal)
      .def("initial_seed", &Generator::initial_seed)
      .def("seed", &Generator::seed)
      // The state as torch's get_state gives it, a uint8 tensor: here 16 bytes, the seed and the
      // offset (little-endian uint64 each, the host's order).
      .def("get_state",
           [](const Generator& g) {
             const uint64_t state[2] = {g.initial_seed(), g.offset()};
             Tensor t = opd::empty({16}, kByte);
             std::memcpy(t.data_ptr(), state, sizeof(state));
             return t;
           })
      .def(
          "set_state",
          [](Generator& g, const Tensor& t) -> Generator& {
            OPD_CHECK_T(TypeError, t.scalar_type() == kByte && t.numel() == 16 && t.is_contiguous(),
                        "RNG state must be a torch.ByteTensor of 16 bytes (get_state's)");
            uint64_t state[2];
            std::memcpy(state, t.data_ptr(), sizeof(state));
            g.set_state(state[0], state[1]);
            return g;
          },
          py::arg("new_state"), py::return_value_policy::reference_internal)
      .def_property_readonly("device", [](const Generator&) { return Device(DeviceType::CPU); })
      .def("__eq__", [](const Generator& a, const Generator& b) { return a == b; })
      .def("__hash__",
           [](const Generator& g) { return std::hash<const void*>()(g.state().get()); });
  m.attr("default_generator") = py::cast(default_generator());
}

}  // namespace opd::python
