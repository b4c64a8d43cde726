// The CPU plugin (libopd_cpu.so): dense CPU kernels for every operator whose `dispatch:` names
// CPU in manifests/native_functions.yaml. Its thread pool is stopped when the plugin shuts down
// (Note [CPU pool and unloading]).

#include "cpu/block_cache.h"
#include "cpu/parallel.h"
#include "opd/native/CPU.h"
#include "opd/plugin.h"

namespace {
void stop_pool() noexcept {
  opd::cpu::shutdown_pool();
  opd::cpu::empty_block_cache();
}
}  // namespace

OPD_PLUGIN(cpu, "0.1.0") {
  // A library still mapped from an earlier load (its tensors were alive) has a stopped pool.
  opd::cpu::enable_pool();
  opd::on_plugin_shutdown(&stop_pool);
}

OPD_LIBRARY_IMPL(aten, CPU, m) { opd::native::register_CPU_kernels(m); }
