#pragma once

#include <optional>
#include <string>

#include "opd/export.h"
#include "opd/function_schema.h"

namespace opd {

// Why a schema inferred from a C++ kernel signature does not fit the declared one, in PyTorch's
// words ("The number of arguments is different. 2 vs 1."), or nullopt when it fits. Names,
// defaults and alias annotations are ignored; SymInt matches int. Exported for the tests.
OPD_API std::optional<std::string> find_schema_differences(const FunctionSchema& declared,
                                                           const FunctionSchema& inferred);

// Throws Error naming the operator, the declared schema and where it was registered, the
// inferred schema and where it came from, and the reason. Exported for the tests.
OPD_API void check_inferred_schema(const FunctionSchema& declared,
                                   const std::string& declared_debug,
                                   const FunctionSchema& inferred,
                                   const std::string& inferred_debug);

}  // namespace opd
