#pragma once

#include <cstdint>
#include <memory>
#include <optional>

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

// Note [Generator objects]
// A `Generator` (a schema's `Generator?` argument, torch.Generator) is a shared handle to a
// {seed, offset} state of its own with its own lock, under the same contract as the
// process-wide one above: reserve(count) hands out counters that no other call of this
// generator gets, so a kernel's values depend only on the generator's seed and the order of
// the calls made with it. Copies share the state (as torch's Generator objects, which are
// references). default_generator() is a handle to the process-wide state itself, so
// manual_seed(s) and default_generator().manual_seed(s) are one operation.
//
// Boxed, a Generator is a Capsule of kind "Generator" (IValue::make_capsule): the IValue has no
// tag of its own for it. Kernels take `const std::optional<Generator>&` and draw through
// reserve_random(generator, count), which uses the default state when it is empty.
struct GeneratorState;

class OPD_API Generator {
 public:
  // A new state with PyTorch's default seed, independent of every other.
  Generator();
  // The handle a boxed Capsule holds (see IValue::to<Generator>).
  explicit Generator(std::shared_ptr<GeneratorState> state);

  // Resets the seed and the offset: the same seed gives the same values.
  void manual_seed(uint64_t seed);
  // The seed last set.
  uint64_t initial_seed() const;
  // Seeds from a non-deterministic source and returns the seed (torch.Generator.seed()).
  uint64_t seed();
  // The counter offset: how many numbers have been reserved since the last seed.
  uint64_t offset() const;
  // Sets the state to {seed, offset} (torch's set_state, in opd's form).
  void set_state(uint64_t seed, uint64_t offset);
  // Reserves `count` numbers (rounded up to whole Philox blocks). Thread-safe.
  RandomReservation reserve(uint64_t count);

  const std::shared_ptr<GeneratorState>& state() const { return state_; }
  // The same state (copies compare equal).
  bool operator==(const Generator& o) const { return state_ == o.state_; }

 private:
  std::shared_ptr<GeneratorState> state_;
};

// The process-wide generator: a handle to the state manual_seed and reserve_random(count) use.
OPD_API Generator default_generator();
// Reserves `count` numbers from `generator`, or from the process-wide state when it is empty.
OPD_API RandomReservation reserve_random(const std::optional<Generator>& generator, uint64_t count);

}  // namespace opd
