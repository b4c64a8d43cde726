// The plugin the plugin benchmarks load: 1,000 operators with a CPU kernel each
// (opd_bench_plugin::op0 ... op999), plus opd_bench_plugin::identity for dispatch timing.

#include <string>

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {
opd::Tensor identity(const opd::Tensor& x) { return x; }
int64_t version(const opd::Tensor&) { return 1; }
}  // namespace

OPD_PLUGIN(bench, "1.0.0") {}

OPD_LIBRARY(opd_bench_plugin, m) {
  m.def("identity(Tensor self) -> Tensor");
  m.def("version(Tensor self) -> int");
  for (int i = 0; i < 1000; ++i) m.def("op" + std::to_string(i) + "(Tensor self) -> Tensor");
}

OPD_LIBRARY_IMPL(opd_bench_plugin, CPU, m) {
  m.impl("identity", &identity);
  m.impl("version", &version);
  for (int i = 0; i < 1000; ++i) m.impl("op" + std::to_string(i), &identity);
}
