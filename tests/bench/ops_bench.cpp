// Operator figures (issue #4 §6), each against a reference measured in the same run:
//   add of 16M floats, broadcast add and sum over 16M: bandwidth against memcpy of the same bytes
//   mm 512 and 2048 float through the dispatcher against a direct cblas_sgemm
// (The small add is in small_add_bench.cpp.) The default plugins are loaded from the build once.

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstring>
#include <vector>

#include "load_plugins.h"
#include "opd/ops.h"
#include "ratios.h"

namespace {

constexpr int64_t kBig = 16 << 20;  // 16M elements, 64 MB of float

// Copies `bytes` bytes per iteration between two preallocated buffers.
void memcpy_bytes(benchmark::State& state, size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<int64_t>(bytes));
}

// add reads two operands and writes one: 3 x 64 MB, as a memcpy of 96 MB (read + write).
void BM_MemcpyAsAdd16M(benchmark::State& state) { memcpy_bytes(state, 3 * kBig * 4 / 2); }
BENCHMARK(BM_MemcpyAsAdd16M)->Unit(benchmark::kMillisecond);

// Broadcast add reads one big operand and writes one; sum reads one: memcpy of 64 / 32 MB.
void BM_MemcpyAsBroadcastAdd16M(benchmark::State& state) { memcpy_bytes(state, kBig * 4); }
BENCHMARK(BM_MemcpyAsBroadcastAdd16M)->Unit(benchmark::kMillisecond);
void BM_MemcpyAsSum16M(benchmark::State& state) { memcpy_bytes(state, kBig * 4 / 2); }
BENCHMARK(BM_MemcpyAsSum16M)->Unit(benchmark::kMillisecond);

void BM_AddOut16M(benchmark::State& state) {
  opd::bench::load_default_plugins();
  opd::Tensor a = opd::ones({kBig}), b = opd::ones({kBig}), out = opd::empty({kBig});
  for (auto _ : state) {
    opd::add_out(out, a, b);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3 * kBig * 4);
}
BENCHMARK(BM_AddOut16M)->Unit(benchmark::kMillisecond);

// The functional form also allocates (and first-touches) its 64 MB result every time.
void BM_Add16M(benchmark::State& state) {
  opd::bench::load_default_plugins();
  opd::Tensor a = opd::ones({kBig}), b = opd::ones({kBig});
  for (auto _ : state) {
    opd::Tensor c = opd::add(a, b);
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(state.iterations() * 3 * kBig * 4);
}
BENCHMARK(BM_Add16M)->Unit(benchmark::kMillisecond);

void BM_BroadcastAddOut16M(benchmark::State& state) {
  opd::bench::load_default_plugins();
  opd::Tensor a = opd::ones({4096, 4096}), b = opd::ones({4096}), out = opd::empty({4096, 4096});
  for (auto _ : state) {
    opd::add_out(out, a, b);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * kBig * 4);
}
BENCHMARK(BM_BroadcastAddOut16M)->Unit(benchmark::kMillisecond);

void BM_Sum16M(benchmark::State& state) {
  opd::bench::load_default_plugins();
  opd::Tensor a = opd::ones({kBig});
  for (auto _ : state) {
    opd::Tensor s = opd::sum(a);
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(state.iterations() * kBig * 4);
}
BENCHMARK(BM_Sum16M)->Unit(benchmark::kMillisecond);

void BM_SgemmDirect(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<float> a(size_t(n) * n, 1.0f), b(size_t(n) * n, 0.5f), c(size_t(n) * n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
}
BENCHMARK(BM_SgemmDirect)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_MmDispatched(benchmark::State& state) {
  opd::bench::load_default_plugins();
  const int64_t n = state.range(0);
  opd::Tensor a = opd::ones({n, n}), b = opd::full({n, n}, 0.5);
  for (auto _ : state) {
    opd::Tensor c = opd::mm(a, b);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_MmDispatched)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond);

const bool kRatios = [] {
  // Time ratios: memcpy of the same bytes / the operator is the operator's share of memcpy's
  // bandwidth.
  opd::bench::add_ratio("BM_MemcpyAsAdd16M", "BM_AddOut16M", ">= 0.9 (bandwidth of add)");
  opd::bench::add_ratio("BM_MemcpyAsAdd16M", "BM_Add16M", "report (add allocating its result)");
  opd::bench::add_ratio("BM_MemcpyAsBroadcastAdd16M", "BM_BroadcastAddOut16M",
                        ">= 0.8 (bandwidth of broadcast add)");
  opd::bench::add_ratio("BM_MemcpyAsSum16M", "BM_Sum16M", ">= 0.8 (bandwidth of sum)");
  opd::bench::add_ratio("BM_SgemmDirect/512", "BM_MmDispatched/512", ">= 0.97");
  opd::bench::add_ratio("BM_SgemmDirect/2048", "BM_MmDispatched/2048", ">= 0.97");
  return true;
}();

}  // namespace
