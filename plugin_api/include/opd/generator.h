#pragma once

#include <cstdint>

#include "opd/export.h"

namespace opd {

// The process-wide random state behind rand and randn on every backend: a seed and a counter
// offset for the Philox generator (plugins/common/philox.h). A kernel drawing `count` numbers
// reserves them and uses counters offset .. offset + count - 1 under `seed`, so the values
// depend only on the seed and the order of the calls, never on the backend or the threads.
// The core only keeps the state; the numbers are computed by the plugins.
struct RandomReservation {
  uint64_t seed;
  uint64_t offset;
};

// Resets the state: the same seed gives the same values (torch.manual_seed).
OPD_API void manual_seed(uint64_t seed);
// The seed last set (PyTorch's default, 67280421310721, until manual_seed is called).
OPD_API uint64_t initial_seed();
// Reserves `count` numbers. Thread-safe.
OPD_API RandomReservation reserve_random(uint64_t count);

}  // namespace opd
