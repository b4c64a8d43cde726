// A plugin that registers a backend fallback (for Tracer) besides an operator, so that reloading
// it must replace a fallback as well as kernels. fixture_fallback::traced returns 1 through the
// fallback when Tracer is in the key set, and 0 from its CPU kernel otherwise.

#include "opd/operator_handle.h"
#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

int64_t traced_cpu(const opd::Tensor&) { return 0; }

void trace_fallback(const opd::OperatorHandle&, opd::Stack* stack) {
  stack->pop_back();
  stack->emplace_back(int64_t{1});
}

}  // namespace

OPD_PLUGIN(fallback, "1.0.0") {}

OPD_LIBRARY(fixture_fallback, m) { m.def("traced(Tensor x) -> int"); }
OPD_LIBRARY_IMPL(fixture_fallback, CPU, m) { m.impl("traced", &traced_cpu); }
OPD_LIBRARY_IMPL(_, Tracer, m) { m.fallback(&trace_fallback); }
