// The composite plugin (libopd_composite.so): the kernels that manifests/native_functions.yaml
// gives to CompositeImplicitAutograd and CompositeExplicitAutograd. Each one re-enters the
// dispatcher only through the typed API (opd/ops.h), so it runs on every backend that has the
// primitives it calls (CPU, Meta, CUDA), and autograd sees those primitives (Implicit) or the
// operator itself (Explicit).

#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/plugin.h"

OPD_PLUGIN(composite, "0.1.0") {}

OPD_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  opd::native::register_CompositeImplicitAutograd_kernels(m);
}

OPD_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  opd::native::register_CompositeExplicitAutograd_kernels(m);
}
