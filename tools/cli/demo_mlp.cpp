#include "demo_mlp.h"

#include <cmath>
#include <iomanip>
#include <ostream>
#include <random>
#include <vector>

#include "opd/autograd.h"
#include "opd/generator.h"
#include "opd/ops.h"

namespace opd::cli {
namespace {

constexpr int64_t kPoints = 1000;  // 500 per class
constexpr double kPi = 3.14159265358979323846;

// Two interleaved spirals of one and a half turns, with a little noise; labels 0 and 1.
void make_spiral(uint64_t seed, Tensor* x, Tensor* y) {
  *x = empty({kPoints, 2}, kFloat);
  *y = empty({kPoints}, kLong);
  float* xs = x->data_ptr<float>();
  int64_t* ys = y->data_ptr<int64_t>();
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  for (int64_t i = 0; i < kPoints; ++i) {
    const int64_t label = i % 2;
    const double r = 0.1 + 0.9 * static_cast<double>(i / 2) / (kPoints / 2);
    const double t = 3 * kPi * r + label * kPi;
    xs[2 * i] = static_cast<float>(r * std::cos(t) + noise(rng));
    xs[2 * i + 1] = static_cast<float>(r * std::sin(t) + noise(rng));
    ys[i] = label;
  }
}

// A weight of `sizes` with He initialisation, a leaf that requires grad.
Tensor parameter(IntArrayRef sizes, double fan_in, Device device) {
  Tensor w = randn(sizes, TensorOptions().device(device));
  w.mul_(std::sqrt(2.0 / fan_in));
  w.requires_grad_(true);
  return w;
}

}  // namespace

MlpResult train_spiral_mlp(const MlpOptions& o, std::ostream& log) {
  manual_seed(o.seed);
  Tensor x_cpu, y_cpu;
  make_spiral(o.seed, &x_cpu, &y_cpu);
  Tensor x = x_cpu.to(o.device, kFloat), y = y_cpu.to(o.device, kLong);

  Tensor w1 = parameter({o.hidden, 2}, 2, o.device);
  Tensor b1 = zeros({o.hidden}, TensorOptions().device(o.device)).requires_grad_(true);
  Tensor w2 = parameter({2, o.hidden}, static_cast<double>(o.hidden), o.device);
  Tensor b2 = zeros({2}, TensorOptions().device(o.device)).requires_grad_(true);
  std::vector<Tensor> params = {w1, b1, w2, b2};
  std::vector<Tensor> velocity;
  for (const Tensor& p : params) velocity.push_back(zeros_like(p));

  MlpResult result;
  for (int64_t step = 1; step <= o.steps; ++step) {
    Tensor logits = linear(relu(linear(x, w1, b1)), w2, b2);
    Tensor loss = cross_entropy_loss(logits, y);
    loss.backward();
    {
      // SGD with momentum 0.9; the update itself records no graph.
      NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i) {
        velocity[i].mul_(0.9).add_(params[i].grad());
        params[i].sub_(velocity[i], o.learning_rate);
        autograd::set_grad(params[i], Tensor());
      }
    }
    result.final_loss = loss.item<double>();
    if (step % o.log_every == 0 || step == 1 || step == o.steps) {
      log << "  step " << std::setw(4) << step << "  loss " << std::fixed << std::setprecision(4)
          << result.final_loss << "\n";
    }
  }
  NoGradGuard no_grad;
  Tensor predicted = argmax(linear(relu(linear(x, w1, b1)), w2, b2), 1);
  result.accuracy = eq(predicted, y).sum().item<double>() / kPoints;
  return result;
}

}  // namespace opd::cli
