// Throws half way through its registrations: the namespace, two defs and two kernels (five
// registrations) are in place when the Meta block throws. The load must leave none behind.

#include <stdexcept>

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {
int64_t first(const opd::Tensor&) { return 1; }
}  // namespace

OPD_PLUGIN(throwing, "0.1.0") {}

OPD_LIBRARY(throwing, m) {
  m.def("first(Tensor x) -> int");
  m.def("second(Tensor x) -> int");
}

OPD_LIBRARY_IMPL(throwing, CPU, m) { m.impl("first", &first); }

OPD_LIBRARY_IMPL(throwing, Meta, m) {
  m.impl("first", &first);
  throw std::runtime_error("throwing fixture: failing after 5 registrations");
}
