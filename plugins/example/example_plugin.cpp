// The example plugin: a small operator set showing the plugin shapes the real backends use.
//   example::scale(Tensor self, float factor) -> Tensor   CPU kernel (float32) and Meta kernel
//   example::twice(Tensor self) -> Tensor                  CompositeImplicitAutograd: re-enters
//                                                          the dispatcher, works on any backend
// It is also the template a vendor can start from.

#include <cstdlib>
#include <vector>

#include "opd/operator_handle.h"
#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

void free_buffer(void* data, void*) { std::free(data); }

// A float32 CPU tensor of `sizes`; its storage keeps this plugin's library mapped.
opd::Tensor empty_cpu(opd::IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  void* data = std::malloc(sizeof(float) * static_cast<size_t>(n > 0 ? n : 1));
  return opd::from_blob(data, sizes, opd::contiguous_strides(sizes), opd::ScalarType::Float32,
                        opd::Device(opd::DeviceType::CPU), &free_buffer, nullptr,
                        opd::this_plugin_reference());
}

// What both kernels refuse: a Meta kernel raises where the real one does (opd conformance and
// opcheck's test_faketensor compare them).
void check_scale_input(const opd::Tensor& self) {
  OPD_CHECK_T(opd::TypeError, self.scalar_type() == opd::ScalarType::Float32,
              "example::scale: expected a Float tensor, got {}",
              opd::to_string(self.scalar_type()));
  OPD_CHECK(self.is_contiguous(), "example::scale: expected a contiguous tensor");
}

opd::Tensor scale_cpu(const opd::Tensor& self, double factor) {
  check_scale_input(self);
  opd::Tensor out = empty_cpu(self.sizes());
  const float* in = self.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < self.numel(); ++i) o[i] = static_cast<float>(in[i] * factor);
  return out;
}

// Shapes only: no memory is allocated, whatever the size.
opd::Tensor scale_meta(const opd::Tensor& self, double) {
  check_scale_input(self);
  return opd::from_blob(nullptr, self.sizes(), opd::contiguous_strides(self.sizes()),
                        self.scalar_type(), opd::Device(opd::DeviceType::Meta));
}

opd::Tensor twice(const opd::Tensor& self) {
  // Looked up per call, not cached: the operator may be re-registered while this plugin lives.
  return opd::find_operator_or_throw("example::scale").call_as<opd::Tensor>(self, 2.0);
}

}  // namespace

OPD_PLUGIN(example, "0.1.0") {}

OPD_LIBRARY(example, m) {
  m.def("scale(Tensor self, float factor) -> Tensor");
  m.def("twice(Tensor self) -> Tensor", &twice);
}

OPD_LIBRARY_IMPL(example, CPU, m) { m.impl("scale", &scale_cpu); }
OPD_LIBRARY_IMPL(example, Meta, m) { m.impl("scale", &scale_meta); }
