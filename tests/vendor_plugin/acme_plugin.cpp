// A vendor plugin: a custom operator namespace with a def and a CPU kernel.

#include <cstdlib>
#include <vector>

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

void free_buffer(void* data, void*) { std::free(data); }

// out = a * x + y, float32, contiguous, same shape.
opd::Tensor axpy(double a, const opd::Tensor& x, const opd::Tensor& y) {
  OPD_CHECK(x.numel() == y.numel(), "acme::axpy: x has {} elements but y has {}", x.numel(),
            y.numel());
  auto* out = static_cast<float*>(std::malloc(sizeof(float) * static_cast<size_t>(x.numel())));
  const float* px = x.data_ptr<float>();
  const float* py = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<float>(a * px[i] + py[i]);
  return opd::from_blob(out, x.sizes(), x.strides(), opd::ScalarType::Float32,
                        opd::Device(opd::DeviceType::CPU), &free_buffer, nullptr,
                        opd::this_plugin_reference());
}

}  // namespace

OPD_PLUGIN(acme, "2.1.0") {}

OPD_LIBRARY(acme, m) { m.def("axpy(float a, Tensor x, Tensor y) -> Tensor"); }

OPD_LIBRARY_IMPL(acme, CPU, m) { m.impl("axpy", &axpy); }
