// A misbehaving plugin with a hand-written entry point: its register callback registers
// everything, then reports an error WITHOUT undoing its registrations (a well-behaved one, as
// OPD_PLUGIN makes it, undoes them first). The manager must clean up through its shutdown
// callback, so that the failed load still leaves nothing behind.

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

int64_t answer(const opd::Tensor&) { return 42; }

opd_plugin_status sloppy_register(opd_plugin_context* ctx) {
  try {
    for (auto* init : opd::detail::LibraryInit::pending_library_inits()) init->run();
  } catch (...) {
    opd_plugin_set_message(ctx, "sloppy fixture: unexpected exception");
    return OPD_PLUGIN_ERROR;
  }
  opd_plugin_set_message(ctx, "sloppy fixture: failing with its registrations still in place");
  return OPD_PLUGIN_ERROR;
}

void sloppy_shutdown() { opd::detail::run_plugin_shutdown(); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const opd_plugin_info* opd_plugin_entry() {
  static const opd_plugin_info info = {
      sizeof(opd_plugin_info), OPD_PLUGIN_ABI_MAJOR, OPD_PLUGIN_ABI_MINOR, "sloppy", "0.1.0",
      OPD_BUILD_FINGERPRINT,   &sloppy_register,     &sloppy_shutdown};
  return &info;
}

OPD_LIBRARY(sloppy, m) { m.def("answer(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(sloppy, CPU, m) { m.impl("answer", &answer); }
