#pragma once

// Warnings for the user of a program (PyTorch's TORCH_WARN): what a kernel or plugin wants the
// person running it to see, not an error. They go to the process's warning handler: by
// default the "opd" logger at warn level (stderr); the Python front-end installs one that
// raises them as Python's UserWarning, so warning filters (and pytest.warns) see them.

#include <string_view>

#include "opd/export.h"

namespace opd {

// Called with each warning, on the thread that warned. It may throw: the exception leaves
// warn(), as a Python warning filter set to "error" turns a warning into an exception.
using WarningHandler = void (*)(std::string_view message);

OPD_API void warn(std::string_view message);

// Installs `handler` for the whole process (null: the default) and returns the previous one.
// Thread-safe; a warning being handled on another thread may still reach the previous one.
OPD_API WarningHandler set_warning_handler(WarningHandler handler);

}  // namespace opd
