// The CPU plugin (libopd_cpu.so): dense CPU kernels for every operator whose `dispatch:` names
// CPU in manifests/native_functions.yaml. Its thread pool is stopped when the plugin shuts down
// (Note [CPU pool and unloading]).

#include <dlfcn.h>

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

// Note [oneDNN and OpenMP stay mapped]: the convolutions run on oneDNN (conv_dnnl.cpp), whose
// threads are libgomp's. Nothing but this plugin holds libdnnl and libgomp, so unloading the
// plugin unloaded them too: libgomp's per-thread memory became leaks (LeakSanitizer saw 8-byte
// blocks from an unmapped module in every test that unloads the plugin) and an OpenMP worker
// still parked in libgomp's code would run unmapped code. As PyTorch never unloads them, the
// plugin marks both RTLD_NODELETE when it loads: they stay for the life of the process, and a
// reload of the plugin finds them loaded (RTLD_NOLOAD: this only pins what is already mapped).
void pin_openmp_runtime() {
  for (const char* library : {"libdnnl.so.2", "libgomp.so.1"}) {
    dlopen(library, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}
}  // namespace

OPD_PLUGIN(cpu, "0.1.0") {
  // A library still mapped from an earlier load (its tensors were alive) has a stopped pool.
  opd::cpu::enable_pool();
  pin_openmp_runtime();
  opd::on_plugin_shutdown(&stop_pool);
  opd::common::set_output_allocator(opd::DeviceType::CPU, &new_output);
}

OPD_LIBRARY_IMPL(aten, CPU, m) { opd::native::register_CPU_kernels(m); }
