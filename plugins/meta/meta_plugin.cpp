// The Meta plugin (libopd_meta.so): shape, stride and dtype inference for every operator whose
// `dispatch:` names Meta in manifests/native_functions.yaml. Its tensors have storages with the
// size their geometry needs and no memory.

#include "opd/native/Meta.h"
#include "opd/plugin.h"

OPD_PLUGIN(meta, "0.1.0") {}

OPD_LIBRARY_IMPL(aten, Meta, m) { opd::native::register_Meta_kernels(m); }
