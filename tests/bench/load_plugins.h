#pragma once

#include "opd/plugin_manager.h"

namespace opd::bench {

// Loads the default plugins (found next to the build's executables) once per process.
inline void load_default_plugins() {
  static const bool loaded = [] {
    opd::plugins().load_default();
    return true;
  }();
  (void)loaded;
}

}  // namespace opd::bench
