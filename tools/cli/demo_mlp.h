#pragma once

// The training part of `opd demo`: a two-layer MLP (linear -> relu -> linear -> cross entropy)
// trained with SGD on a seeded two-class spiral, entirely through the dispatcher, with gradients
// from the autograd plugin.

#include <cstdint>
#include <iosfwd>

#include "opd/device.h"

namespace opd::cli {

struct MlpOptions {
  int64_t steps = 600;
  int64_t hidden = 64;
  uint64_t seed = 0;
  Device device = Device(DeviceType::CPU);
  double learning_rate = 0.5;
  int64_t log_every = 50;
};

struct MlpResult {
  double final_loss = 0;
  double accuracy = 0;  // on the 1,000 training points, in [0, 1]
};

MlpResult train_spiral_mlp(const MlpOptions& options, std::ostream& log);

}  // namespace opd::cli
