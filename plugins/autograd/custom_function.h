#pragma once
// The node of a custom autograd function (opd::autograd::Function, opd/autograd_function.h) and
// the operator that records it.

#include "opd/library.h"

namespace opd::autograd {

// autograd::_record_function, on `m` (a library for namespace autograd).
void register_custom_function(Library& m);

}  // namespace opd::autograd
