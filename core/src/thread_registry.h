#pragma once

namespace opd::detail {

// True when, at some instant during this call, no thread was inside a dispatcher call. Any
// kernel or operator entry unpublished before this call returned true is then unreachable.
// Returns false when some thread is still in a call, or when the kernel offers no way to
// order this check against other threads' plain stores (then nothing may be reclaimed).
// See Note [Kernel reclamation] in dispatcher.cpp.
bool no_dispatch_in_flight();

}  // namespace opd::detail
