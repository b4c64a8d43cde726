// A hostile plugin whose registration loads itself again through the plugin manager (by its own
// manifest, which status() names). The manager must refuse the nested load instead of recursing;
// the PluginError it throws fails this registration, so the outer load fails and nothing of the
// plugin remains.

#include "opd/plugin.h"
#include "opd/plugin_manager.h"
#include "opd/tensor.h"

namespace {
int64_t answer(const opd::Tensor&) { return 42; }
}  // namespace

OPD_PLUGIN(reentrant, "1.0.0") { opd::plugins().load(opd::plugins().status("reentrant").manifest); }

OPD_LIBRARY(reentrant, m) { m.def("answer(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(reentrant, CPU, m) { m.impl("answer", &answer); }
