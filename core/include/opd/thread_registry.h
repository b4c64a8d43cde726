#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "opd/export.h"

namespace opd::detail {

// What the reclaimer knows of one thread, kept apart from the thread's dispatch keys
// (opd/local_dispatch_key_set.h): plugins see those, never these. Read on every dispatch, so
// constinit, trivially destructible and initial-exec like them.
struct ThreadCallCounter {
  // Low 16 bits: dispatcher calls running on this thread (nested calls count). High bits: how
  // many times that count returned to zero. Written only by its thread, read by the reclaimer.
  // See Note [Kernel reclamation] in core/src/dispatch/dispatcher.cpp.
  std::atomic<uint64_t> calls{0};
  bool registered = false;  // known to the reclaimer
};

extern OPD_API constinit thread_local ThreadCallCounter tls_call_counter
    __attribute__((tls_model("initial-exec")));

// Makes this thread's counter visible to the reclaimer. Called once per thread, on its first
// dispatch.
OPD_API void register_dispatch_thread();

// Which threads were inside dispatcher calls at one instant, and how far each had got. See
// Note [Kernel reclamation] in core/src/dispatch/dispatcher.cpp.
struct QuiescenceSnapshot {
  struct Thread {
    uint64_t id;     // the thread's registration number (threads may exit and be replaced)
    uint64_t calls;  // its ThreadCallCounter::calls at the snapshot
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
