#pragma once

// The device factories use inside `with opdispatch.device(...)` on this thread (types.cpp),
// as torch.device's context manager: nullopt outside any.

#include <optional>

#include "opd/device.h"

namespace opd::python {

std::optional<Device> default_device();

}  // namespace opd::python
