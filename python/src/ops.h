#pragma once

// Calling operators from Python by their schemas (ops.cpp): what opdispatch.ops' packets and
// overloads, the schema-bound Tensor methods and the module-level functions share.

#include <pybind11/pybind11.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opd/dispatcher.h"

namespace opd::python {

// Converts the Python arguments, binds them as opd eval does (bind::bind_to_overloads over
// `candidates`, `name` in errors), calls the chosen overload boxed without the GIL (or
// redispatches it to `keys`), and converts its results (see call_result). `self_bound`: a
// Tensor method call, args[0] being the tensor (bind::CallArgs::self_bound). `args`: a tuple;
// `kwargs`: a dict, or null for none.
pybind11::object call_overloads(std::span<const OperatorHandle> candidates, std::string_view name,
                                pybind11::handle args, pybind11::handle kwargs,
                                std::optional<DispatchKeySet> keys = std::nullopt,
                                bool self_bound = false);

}  // namespace opd::python
