#pragma once

// OPD_API marks the symbols libopd_core.so exports. Everything else is built with hidden
// visibility, in the core and in every plugin.
#define OPD_API __attribute__((visibility("default")))
