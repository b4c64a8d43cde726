#pragma once
// The autograd fallback (Note [Autograd fallback] in fallback.cpp).

#include <string>
#include <string_view>

#include "opd/library.h"

namespace opd::autograd {

// On `m`, a library for the Autograd alias key and namespace "_".
void register_fallback(Library& m);
// The kernels of autograd::_set_fallback_mode and autograd::_fallback_mode. Not named as the
// plugin API's opd::autograd::set_fallback_mode and fallback_mode, which call these through the
// dispatcher: only hidden visibility would keep a definition of the same name apart.
void set_fallback_mode_kernel(std::string_view mode);
std::string fallback_mode_kernel();

}  // namespace opd::autograd
