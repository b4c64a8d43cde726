// The plugin of the manifest ABI test: an entry point and nothing to register.

#include "opd/plugin.h"

OPD_PLUGIN(abi_kit, "1.0.0") {}
