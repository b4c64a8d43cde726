#pragma once

#include <cstdint>
#include <vector>

#include "opd/export.h"

namespace opd::detail {

// Which threads were inside dispatcher calls at one instant, and how far each had got. See
// Note [Kernel reclamation] in core/src/dispatcher.cpp.
struct QuiescenceSnapshot {
  struct Thread {
    uint64_t id;     // the thread's registration number (threads may exit and be replaced)
    uint64_t calls;  // its ThreadDispatchState::calls at the snapshot
  };
  std::vector<Thread> busy;  // threads that were in a call
  bool valid = false;        // false when no memory barrier could be issued
};

// Takes a snapshot after a process-wide memory barrier, so that every call that started before
// it shows as busy. Anything unpublished before this call can only still be reached by the
// threads listed as busy, in the calls they were running.
OPD_API QuiescenceSnapshot take_quiescence_snapshot();

// True when every thread busy in `snapshot` has since left all its calls (or exited).
OPD_API bool has_passed(const QuiescenceSnapshot& snapshot);

}  // namespace opd::detail
