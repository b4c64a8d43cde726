// A plugin whose manifest declares [CPU] but which also registers a Meta kernel (the report's
// case: CPU and Meta kernels behind a manifest that lists CPU alone). The load must fail naming
// the plugin, the key, the operator and the declared keys, leaving nothing registered.

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {
int64_t answer(const opd::Tensor&) { return 1; }
}  // namespace

OPD_PLUGIN(undeclared, "1.0.0") {}

OPD_LIBRARY(undeclared, m) { m.def("answer(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(undeclared, CPU, m) { m.impl("answer", &answer); }

OPD_LIBRARY_IMPL(undeclared, Meta, m) { m.impl("answer", &answer); }
