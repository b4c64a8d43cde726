#pragma once
// The autograd fallback (Note [Autograd fallback] in fallback.cpp).

#include <string>
#include <string_view>

#include "opd/library.h"

namespace opd::autograd {

// On `m`, a library for the Autograd alias key and namespace "_".
void register_fallback(Library& m);
// The kernels of autograd::_set_fallback_mode and autograd::_fallback_mode.
void set_fallback_mode(std::string_view mode);
std::string fallback_mode();

}  // namespace opd::autograd
