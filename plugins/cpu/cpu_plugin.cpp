// The CPU plugin (libopd_cpu.so): dense CPU kernels for every operator whose `dispatch:` names
// CPU in manifests/native_functions.yaml. Its thread pool is stopped when the plugin shuts down
// (Note [CPU pool and unloading]).

#include "common/output.h"
#include "cpu/allocator.h"
#include "cpu/block_cache.h"
#include "cpu/parallel.h"
#include "opd/native/CPU.h"
#include "opd/plugin.h"

namespace {
// Kernels' new outputs, without a dispatched aten::empty (Note [Output allocation]).
opd::Tensor new_output(opd::IntArrayRef sizes, opd::ScalarType dtype, opd::Device) {
  return opd::cpu::empty_cpu(sizes, dtype);
}

void stop_pool() noexcept {
  opd::cpu::shutdown_pool();
  opd::cpu::empty_block_cache();  // see Note [Large block cache]
}
}  // namespace

OPD_PLUGIN(cpu, "0.1.0") {
  // A library still mapped from an earlier load (its tensors were alive) has a stopped pool.
  opd::cpu::enable_pool();
  opd::on_plugin_shutdown(&stop_pool);
  opd::common::set_output_allocator(opd::DeviceType::CPU, &new_output);
}

OPD_LIBRARY_IMPL(aten, CPU, m) { opd::native::register_CPU_kernels(m); }
