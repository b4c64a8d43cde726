// Requires the good plugin (see dependant.yaml) and calls its operator: dependant::twice(x) is
// 2 * fixture::value(x).

#include "opd/operator_handle.h"
#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

int64_t twice(const opd::Tensor& x) {
  // Looked up on every call: the good plugin may have been reloaded since the last one.
  return 2 * opd::find_operator_or_throw("fixture::value").call_as<int64_t>(x);
}

}  // namespace

OPD_PLUGIN(dependant, "0.1.0") {}

OPD_LIBRARY(dependant, m) { m.def("twice(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(dependant, CPU, m) { m.impl("twice", &twice); }
