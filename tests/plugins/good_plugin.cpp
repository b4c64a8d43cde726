// A well-behaved plugin, built twice: GOOD_VERSION 1 and 2 return different values, for the
// hot-swap tests. It defines fixture::value (CPU kernel returns the version) and
// fixture::alloc, whose CPU kernel allocates a storage with the plugin's own deleter.

#include <cstdlib>

#include "opd/plugin.h"
#include "opd/tensor.h"

#ifndef GOOD_VERSION
#define GOOD_VERSION 1
#endif

namespace {

int64_t value(const opd::Tensor&) { return GOOD_VERSION; }

void free_buffer(void* data, void*) { std::free(data); }

opd::Tensor alloc(const opd::Tensor&, int64_t n) {
  void* data = std::calloc(static_cast<size_t>(n), sizeof(float));
  return opd::from_blob(data, std::vector<int64_t>{n}, std::vector<int64_t>{1},
                        opd::ScalarType::Float32, opd::Device(opd::DeviceType::CPU), &free_buffer,
                        nullptr, opd::this_plugin_reference());
}

}  // namespace

OPD_PLUGIN(good, OPD_STRINGIFY(GOOD_VERSION) ".0.0") {}

OPD_LIBRARY(fixture, m) {
  m.def("value(Tensor x) -> int");
  m.def("alloc(Tensor like, int n) -> Tensor");
}

OPD_LIBRARY_IMPL(fixture, CPU, m) {
  m.impl("value", &value);
  m.impl("alloc", &alloc);
}
