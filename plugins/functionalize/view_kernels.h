#pragma once
// The Functionalize kernels of the view operators (Note [Views under functionalize]).

#include "opd/library.h"

namespace opd::functionalize {

// On `m`, a library for namespace aten and the Functionalize key.
void register_view_kernels(Library& m);

}  // namespace opd::functionalize
