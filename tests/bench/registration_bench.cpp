// Registering 2,000 operators (def + one CPU impl each) and deregistering them.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace {

constexpr int kOps = 2000;

opd::Tensor kernel(const opd::Tensor& x) { return x; }

const std::vector<std::string>& schemas() {
  static const std::vector<std::string> s = [] {
    std::vector<std::string> out;
    for (int i = 0; i < kOps; ++i)
      out.push_back("op" + std::to_string(i) + "(Tensor self) -> Tensor");
    return out;
  }();
  return s;
}

const std::vector<std::string>& names() {
  static const std::vector<std::string> s = [] {
    std::vector<std::string> out;
    for (int i = 0; i < kOps; ++i) out.push_back("op" + std::to_string(i));
    return out;
  }();
  return s;
}

void register_all(opd::Library& def, opd::Library& cpu) {
  for (int i = 0; i < kOps; ++i) {
    def.def(schemas()[i]);
    cpu.impl(names()[i], &kernel);
  }
}

// Time per def+impl pair (schema parsed from text, as Library::def does).
void BM_Register2000DefImplPairs(benchmark::State& state) {
  for (auto _ : state) {
    opd::Library def(opd::Library::DEF, "opd_reg_bench");
    opd::Library cpu(opd::Library::IMPL, "opd_reg_bench", opd::DispatchKey::CPU);
    register_all(def, cpu);
    state.PauseTiming();
    cpu.reset();
    def.reset();
    state.ResumeTiming();
  }
  state.counters["per_pair"] =
      benchmark::Counter(static_cast<double>(kOps) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Register2000DefImplPairs)->Unit(benchmark::kMillisecond);

// Time per deregistration of a def+impl pair.
void BM_Deregister2000DefImplPairs(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    opd::Library def(opd::Library::DEF, "opd_reg_bench");
    opd::Library cpu(opd::Library::IMPL, "opd_reg_bench", opd::DispatchKey::CPU);
    register_all(def, cpu);
    state.ResumeTiming();
    cpu.reset();
    def.reset();
    opd::Dispatcher::singleton().reclaim();
  }
  state.counters["per_pair"] =
      benchmark::Counter(static_cast<double>(kOps) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Deregister2000DefImplPairs)->Unit(benchmark::kMillisecond);

}  // namespace
