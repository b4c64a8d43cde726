// A shared object built like a plugin but without OPD_PLUGIN: it has no opd_plugin_entry, so the
// manager must refuse it, quoting dlerror().

#include "opd/library.h"

extern "C" __attribute__((visibility("default"))) int missing_entry_marker() { return 42; }
