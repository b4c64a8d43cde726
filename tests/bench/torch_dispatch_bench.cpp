// The same cases as dispatch_bench.cpp and registration_bench.cpp, through PyTorch's own
// dispatcher (Debian's libtorch-dev), so that both print side by side. Built only where
// find_package(Torch) succeeds; never needed by the tests.

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <benchmark/benchmark.h>
#include <torch/library.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ratios.h"

namespace {

[[gnu::noinline]] at::Tensor identity(const at::Tensor& x) { return x; }

TORCH_LIBRARY(opd_torch_bench, m) { m.def("identity(Tensor self) -> Tensor"); }
TORCH_LIBRARY_IMPL(opd_torch_bench, CPU, m) { m.impl("identity", &identity); }

c10::TypedOperatorHandle<at::Tensor(const at::Tensor&)> identity_op() {
  return c10::Dispatcher::singleton()
      .findSchemaOrThrow("opd_torch_bench::identity", "")
      .typed<at::Tensor(const at::Tensor&)>();
}

void BM_TorchDirectCall(benchmark::State& state) {
  at::Tensor x = at::ones({4});
  at::Tensor (*volatile fn)(const at::Tensor&) = &identity;
  for (auto _ : state) {
    at::Tensor y = fn(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_TorchDirectCall);

void BM_TorchDispatchUnboxed(benchmark::State& state) {
  auto op = identity_op();
  at::Tensor x = at::ones({4});
  for (auto _ : state) {
    at::Tensor y = op.call(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_TorchDispatchUnboxed);

void BM_TorchDispatchBoxed(benchmark::State& state) {
  auto op = identity_op();
  at::Tensor x = at::ones({4});
  torch::jit::Stack stack;
  stack.reserve(1);
  for (auto _ : state) {
    stack.emplace_back(x);
    op.callBoxed(&stack);
    benchmark::DoNotOptimize(stack.back());
    stack.clear();
  }
}
BENCHMARK(BM_TorchDispatchBoxed);

// BM_TorchDispatchBoxed's loop without the dispatcher, as BM_BoxedWithoutDispatcher
// (dispatch_bench.cpp) on ATen's tensors.
void BM_TorchBoxedWithoutDispatcher(benchmark::State& state) {
  at::Tensor x = at::ones({4});
  torch::jit::Stack stack;
  stack.reserve(1);
  for (auto _ : state) {
    stack.emplace_back(x);
    at::Tensor y = identity(stack.back().toTensor());
    stack.back() = std::move(y);
    benchmark::DoNotOptimize(stack.back());
    stack.clear();
  }
}
BENCHMARK(BM_TorchBoxedWithoutDispatcher);

// The small add of ops_bench.cpp (BM_SmallAddDispatched), through ATen: dispatch, broadcasting,
// promotion and allocation included.
void BM_TorchSmallAdd(benchmark::State& state) {
  at::Tensor a = at::ones({2, 3}), b = at::ones({3});
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_TorchSmallAdd);

void BM_TorchSmallAddRequiresGrad(benchmark::State& state) {
  at::Tensor a = at::ones({2, 3}).requires_grad_(true), b = at::ones({3});
  for (auto _ : state) {
    at::Tensor c = at::add(a, b);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_TorchSmallAddRequiresGrad);

constexpr int kOps = 2000;

// torch::Library takes C strings: build them once, outside the timed region.
const std::vector<std::string>& texts(bool schemas) {
  static const auto make = [](bool with_schema) {
    std::vector<std::string> out;
    for (int i = 0; i < kOps; ++i) {
      out.push_back("op" + std::to_string(i) + (with_schema ? "(Tensor self) -> Tensor" : ""));
    }
    return out;
  };
  static const std::vector<std::string> s = make(true), n = make(false);
  return schemas ? s : n;
}

void register_all(torch::Library& def, torch::Library& cpu) {
  for (int i = 0; i < kOps; ++i) {
    def.def(texts(true)[i].c_str());
    cpu.impl(texts(false)[i].c_str(), &identity);
  }
}

std::unique_ptr<torch::Library> library(torch::Library::Kind kind,
                                        c10::optional<c10::DispatchKey> key) {
  return std::make_unique<torch::Library>(kind, "opd_torch_reg", key, __FILE__, __LINE__);
}

void BM_TorchRegister2000DefImplPairs(benchmark::State& state) {
  for (auto _ : state) {
    auto def = library(torch::Library::FRAGMENT, c10::nullopt);
    auto cpu = library(torch::Library::IMPL, c10::DispatchKey::CPU);
    register_all(*def, *cpu);
    state.PauseTiming();
    cpu.reset();
    def.reset();
    state.ResumeTiming();
  }
  state.counters["per_pair"] =
      benchmark::Counter(static_cast<double>(kOps) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TorchRegister2000DefImplPairs)->Unit(benchmark::kMillisecond);

void BM_TorchDeregister2000DefImplPairs(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto def = library(torch::Library::FRAGMENT, c10::nullopt);
    auto cpu = library(torch::Library::IMPL, c10::DispatchKey::CPU);
    register_all(*def, *cpu);
    state.ResumeTiming();
    cpu.reset();
    def.reset();
  }
  state.counters["per_pair"] =
      benchmark::Counter(static_cast<double>(kOps) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TorchDeregister2000DefImplPairs)->Unit(benchmark::kMillisecond);

const bool ratios_declared = [] {
  opd::bench::add_ratio("BM_TorchDispatchUnboxed", "BM_TorchDirectCall", "PyTorch's own ratio");
  opd::bench::add_ratio("BM_TorchDispatchBoxed", "BM_TorchDirectCall", "PyTorch's own ratio");
  opd::bench::add_ratio("BM_TorchSmallAddRequiresGrad", "BM_TorchSmallAdd", "PyTorch's own ratio");
  // Issue #13's figures: opdispatch's dispatch (dispatch_bench.cpp) against c10's, same kernel.
  opd::bench::add_ratio("BM_DispatchUnboxed", "BM_TorchDispatchUnboxed", "report");
  opd::bench::add_ratio("BM_DispatchBoxed", "BM_TorchDispatchBoxed", "<= 0.5");
  // The same, of the time each spends above the same loop without its dispatcher.
  opd::bench::add_ratio_over_baselines("BM_DispatchBoxed", "BM_BoxedWithoutDispatcher",
                                       "BM_TorchDispatchBoxed", "BM_TorchBoxedWithoutDispatcher",
                                       "report");
  // Issue #4's figure: opdispatch's small add (small_add_bench.cpp) against at::add.
  opd::bench::add_ratio("BM_SmallAddDispatched", "BM_TorchSmallAdd", "< 0.4");
  return true;
}();

}  // namespace
