// Requires a plugin that exists nowhere (see needs_missing.yaml); never registered.

#include "opd/plugin.h"

OPD_PLUGIN(needs_missing, "0.1.0") {}
