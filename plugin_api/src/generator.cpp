#include "opd/generator.h"

#include <mutex>
#include <random>

namespace opd {

// One random state (Note [Generator objects]).
struct GeneratorState {
  std::mutex mutex;
  uint64_t seed = 67280421310721ULL;
  uint64_t offset = 0;
};

namespace {

const std::shared_ptr<GeneratorState>& default_state() {
  // Never destroyed: plugins may draw during exit.
  static auto* s = new std::shared_ptr<GeneratorState>(std::make_shared<GeneratorState>());
  return *s;
}

RandomReservation reserve_from(GeneratorState& s, uint64_t count) {
  std::lock_guard<std::mutex> lock(s.mutex);
  RandomReservation r{s.seed, s.offset};
  // Philox yields four 32-bit numbers per counter; keep reservations on a multiple of four so
  // that a kernel may consume whole blocks.
  s.offset += (count + 3) / 4 * 4;
  return r;
}

}  // namespace

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

uint64_t initial_seed() { return default_generator().initial_seed(); }

RandomReservation reserve_random(uint64_t count) { return reserve_from(*default_state(), count); }

Generator::Generator() : state_(std::make_shared<GeneratorState>()) {}

Generator::Generator(std::shared_ptr<GeneratorState> state) : state_(std::move(state)) {}

void Generator::manual_seed(uint64_t seed) { set_state(seed, 0); }

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->seed;
}

uint64_t Generator::seed() {
  // As torch's: a seed from the OS's entropy source.
  std::random_device device;
  const uint64_t s = (static_cast<uint64_t>(device()) << 32) | device();
  manual_seed(s);
  return s;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->offset;
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->seed = seed;
  state_->offset = offset;
}

RandomReservation Generator::reserve(uint64_t count) { return reserve_from(*state_, count); }

Generator default_generator() { return Generator(default_state()); }

RandomReservation reserve_random(const std::optional<Generator>& generator, uint64_t count) {
  return reserve_from(generator ? *generator->state() : *default_state(), count);
}

}  // namespace opd
