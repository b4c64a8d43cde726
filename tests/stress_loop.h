#pragma once

// The loop of the concurrency tests: one thread changes the registrations while others call.

#include <chrono>
#include <cstdint>
#include <thread>

namespace opd::test {

// Runs `step` until `until()` holds and at least `min_steps` ran, or 20 s passed: races need
// the scheduler's help, and a test must assert that both sides of its race were observed
// without depending on the machine's speed.
template <class Step, class Until>
int64_t run_until(int64_t min_steps, Step step, Until until) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int64_t i = 0;
  for (; i < min_steps || (!until() && std::chrono::steady_clock::now() < deadline); ++i) {
    step(i);
    if (i % 1000 == 999) std::this_thread::yield();
  }
  return i;
}

}  // namespace opd::test
