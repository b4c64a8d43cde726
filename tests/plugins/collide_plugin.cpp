// Defines an operator of its own, then fixture::value, which the good plugin defines too: loaded
// after the good one, it must be refused with an error naming both plugins, and its own
// operator must be gone.

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {
int64_t own(const opd::Tensor&) { return 7; }
}  // namespace

OPD_PLUGIN(collide, "0.1.0") {}

OPD_LIBRARY(collide, m) { m.def("own(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(collide, CPU, m) { m.impl("own", &own); }

OPD_LIBRARY_FRAGMENT(fixture, m) { m.def("value(Tensor x) -> int"); }
