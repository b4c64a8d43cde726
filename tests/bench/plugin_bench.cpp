// Plugin figures: load + register of a plugin with 1,000 kernels and its unload; load/unload
// cycles; dispatch throughput while another thread reloads the plugin; dispatch to a kernel
// that lives in a plugin against a direct call.

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/plugin_manager.h"
#include "opd/tensor.h"
#include "ratios.h"

namespace {

using opd::Tensor;

const char* kManifest = OPD_BENCH_PLUGIN_DIR "/bench.yaml";

Tensor input() {
  static float data[4] = {1, 2, 3, 4};
  return opd::from_blob(data, std::vector<int64_t>{4}, opd::ScalarType::Float32);
}

void BM_PluginLoad1000Kernels(benchmark::State& state) {
  for (auto _ : state) {
    opd::plugins().load(kManifest);
    state.PauseTiming();
    opd::plugins().unload("bench");
    state.ResumeTiming();
  }
}
BENCHMARK(BM_PluginLoad1000Kernels)->Unit(benchmark::kMillisecond);

void BM_PluginUnload1000Kernels(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    opd::plugins().load(kManifest);
    state.ResumeTiming();
    opd::plugins().unload("bench");
  }
}
BENCHMARK(BM_PluginUnload1000Kernels)->Unit(benchmark::kMillisecond);

void BM_PluginLoadUnloadCycle(benchmark::State& state) {
  for (auto _ : state) {
    opd::plugins().load(kManifest);
    opd::plugins().unload("bench");
  }
}
BENCHMARK(BM_PluginLoadUnloadCycle)->Unit(benchmark::kMillisecond)->Iterations(100);

// Two threads call a plugin's kernel for one second; with arg 1, a third thread reloads that
// plugin 100 times meanwhile, evenly spread. Reports calls per second and failed calls (a call
// that threw or returned a wrong value).
void BM_DispatchThroughputDuringReload(benchmark::State& state) {
  bool reload = state.range(0) == 1;
  opd::plugins().load(OPD_BENCH_PLUGIN_DIR "/bench_small.yaml");
  for (auto _ : state) {
    std::atomic<bool> done{false};
    std::atomic<int64_t> calls{0}, failed{0};
    auto worker = [&] {
      auto op = opd::Dispatcher::singleton()
                    .find_schema_or_throw("opd_bench_small::version", "")
                    .typed<int64_t(const Tensor&)>();
      Tensor x = input();
      int64_t n = 0;
      while (!done.load(std::memory_order_relaxed)) {
        try {
          if (op.call(x) != 1) failed.fetch_add(1);
        } catch (...) {
          failed.fetch_add(1);
        }
        ++n;
      }
      calls.fetch_add(n);
    };
    auto start = std::chrono::steady_clock::now();
    std::thread t1(worker), t2(worker);
    for (int i = 1; i <= 100; ++i) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(10 * i));
      if (reload) opd::plugins().reload("bench_small");
    }
    done = true;
    t1.join();
    t2.join();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(seconds / static_cast<double>(calls.load()));
    state.counters["calls_per_s"] = static_cast<double>(calls.load()) / seconds;
    state.counters["failed"] = static_cast<double>(failed.load());
  }
  opd::plugins().unload("bench_small");
}
BENCHMARK(BM_DispatchThroughputDuringReload)->Arg(0)->Arg(1)->Iterations(1)->UseManualTime();

[[gnu::noinline]] Tensor direct_identity(const Tensor& x) { return x; }

void BM_DirectCallSameSignature(benchmark::State& state) {
  Tensor x = input();
  Tensor (*volatile fn)(const Tensor&) = &direct_identity;
  for (auto _ : state) {
    Tensor y = fn(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_DirectCallSameSignature);

void BM_DispatchToPluginKernel(benchmark::State& state) {
  opd::plugins().load(kManifest);
  {
    auto op = opd::Dispatcher::singleton()
                  .find_schema_or_throw("opd_bench_plugin::identity", "")
                  .typed<Tensor(const Tensor&)>();
    Tensor x = input();
    for (auto _ : state) {
      Tensor y = op.call(x);
      benchmark::DoNotOptimize(y);
    }
  }
  opd::plugins().unload("bench");
}
BENCHMARK(BM_DispatchToPluginKernel);

const bool ratios_declared = [] {
  opd::bench::add_ratio("BM_DispatchToPluginKernel", "BM_DirectCallSameSignature", "<= 1.2");
  // Time per call without reloads over time per call with them: the throughput ratio.
  opd::bench::add_ratio("BM_DispatchThroughputDuringReload/0",
                        "BM_DispatchThroughputDuringReload/1",
                        ">= 0.9 (throughput during reloads / without)");
  return true;
}();

}  // namespace
