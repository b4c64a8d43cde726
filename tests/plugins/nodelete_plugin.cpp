// A well-formed plugin linked with -z nodelete, as a plugin built without -fno-gnu-unique
// effectively is: dlclose cannot unmap it, so after unload the manager must report it resident
// with the reason. Built outside test_plugins/ (the symbol check would rightly fail on it).

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {
int64_t ping(const opd::Tensor&) { return 1; }
}  // namespace

OPD_PLUGIN(nodelete, "0.1.0") {}

OPD_LIBRARY(nodelete, m) { m.def("ping(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(nodelete, CPU, m) { m.impl("ping", &ping); }
