// The small add of issue #4 §6: a 2x3 tensor plus a 3-element one through the dispatcher, with
// broadcasting, type promotion and the result's allocation, against a bare loop; and the same
// add when an input requires grad (issue #5). opd_bench_torch links this file too, so that the
// comparison with at::add is a ratio measured in one run (torch_dispatch_bench.cpp).

#include <benchmark/benchmark.h>

#include "load_plugins.h"
#include "opd/ops.h"
#include "ratios.h"

namespace {

// The small add: what the dispatcher, broadcasting, promotion and allocation cost together.
[[gnu::noinline]] void bare_broadcast_add(const float* a, const float* b, float* out) {
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) out[i * 3 + j] = a[i * 3 + j] + b[j];
  }
}

void BM_SmallAddBareLoop(benchmark::State& state) {
  float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {1, 1, 1}, out[6];
  for (auto _ : state) {
    bare_broadcast_add(a, b, out);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_SmallAddBareLoop);

void BM_SmallAddDispatched(benchmark::State& state) {
  opd::bench::load_default_plugins();
  opd::Tensor a = opd::ones({2, 3}), b = opd::ones({3});
  for (auto _ : state) {
    opd::Tensor c = opd::add(a, b);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_SmallAddDispatched);

// Autograd (issue #5): the same add when an input requires grad records an AddBackward0 node.
void BM_SmallAddRequiresGrad(benchmark::State& state) {
  opd::bench::load_default_plugins();
  opd::Tensor a = opd::ones({2, 3}).requires_grad_(true), b = opd::ones({3});
  for (auto _ : state) {
    opd::Tensor c = opd::add(a, b);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_SmallAddRequiresGrad);

const bool kRatios = [] {
  opd::bench::add_ratio("BM_SmallAddDispatched", "BM_SmallAddBareLoop", "report");
  opd::bench::add_ratio("BM_SmallAddRequiresGrad", "BM_SmallAddDispatched", "<= 2 (autograd)");
  return true;
}();

}  // namespace
