// A small plugin for the reload-throughput benchmark: one operator, opd_bench_small::version.

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {
int64_t version(const opd::Tensor&) { return 1; }
}  // namespace

OPD_PLUGIN(bench_small, "1.0.0") {}

OPD_LIBRARY(opd_bench_small, m) { m.def("version(Tensor self) -> int"); }

OPD_LIBRARY_IMPL(opd_bench_small, CPU, m) { m.impl("version", &version); }
