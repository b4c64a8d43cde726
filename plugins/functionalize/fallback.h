#pragma once
// The Functionalize key's boxed fallback (Note [Functionalize fallback] in fallback.cpp).

#include "opd/library.h"

namespace opd::functionalize {

// On `m`, a library for the Functionalize key and namespace "_".
void register_fallback(Library& m);

}  // namespace opd::functionalize
