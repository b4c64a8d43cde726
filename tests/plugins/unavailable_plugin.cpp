// Reports itself unavailable from its body, as a device plugin does on a machine without the
// device; its OPD_LIBRARY blocks must then never run.

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {
int64_t never(const opd::Tensor&) { return -1; }
}  // namespace

OPD_PLUGIN(unavailable, "0.1.0") { opd::plugin_unavailable("no fixture device on this machine"); }

OPD_LIBRARY(unavailable, m) { m.def("never(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(unavailable, CPU, m) { m.impl("never", &never); }
