#include "opd/generator.h"

#include <mutex>

namespace opd {
namespace {

struct State {
  std::mutex mutex;
  uint64_t seed = 67280421310721ULL;
  uint64_t offset = 0;
};

State& state() {
  static State* s = new State();  // never destroyed: plugins may draw during exit
  return *s;
}

}  // namespace

void manual_seed(uint64_t seed) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.seed = seed;
  s.offset = 0;
}

uint64_t initial_seed() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.seed;
}

RandomReservation reserve_random(uint64_t count) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  RandomReservation r{s.seed, s.offset};
  // Philox yields four 32-bit numbers per counter; keep reservations on a multiple of four so
  // that a kernel may consume whole blocks.
  s.offset += (count + 3) / 4 * 4;
  return r;
}

}  // namespace opd
