// GPU figures (opd_bench_cuda), each against a reference measured in the same run, on cuda:0:
//   add of 256M floats and sum over 256M floats: bandwidth against a device-to-device
//     cudaMemcpy that moves the same bytes
//   mm 8192 x 8192 in Float32 and BFloat16 through the dispatcher against a direct cuBLAS call
//   dispatch + launch of a 1-element add against a bare launch of an equivalent kernel
//   10,000 allocations and frees of mixed sizes through empty() against cudaMalloc / cudaFree
//   a non-blocking copy of 256 MiB from pinned host memory through copy_ against
//     cudaMemcpyAsync from a cudaHostAlloc buffer
// When the cuda plugin is not loaded (no device, no driver) the binary prints one line saying
// why and runs no case (opd::bench::require_for_suite); a case whose operator throws is skipped
// with the error. Device work is waited for (cudaDeviceSynchronize) inside
// each timed iteration and times are wall-clock, except for the tiny add, which times the host
// side of one call.

#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_main.h"
#include "cuda_bench_kernels.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "ratios.h"

namespace {

using opd::ScalarType;
using opd::Tensor;

constexpr int64_t kBig = int64_t{256} << 20;  // 256M elements, 1 GiB of float
constexpr int kMm = 8192;
constexpr opd::Device kCuda(opd::DeviceType::CUDA, 0);

// Why the cuda plugin does not serve, "" when it does; asked once, after loading the default
// plugins from the build.
const std::string& cuda_unavailable() {
  static const std::string reason = []() -> std::string {
    try {
      opd::plugins().load_default();
      const opd::PluginStatus s = opd::plugins().status("cuda");
      if (s.state == opd::PluginState::Loaded) return "";
      return std::string("the cuda plugin is ") + opd::to_string(s.state) +
             (s.reason.empty() ? "" : ": " + s.reason);
    } catch (const std::exception& e) {
      return e.what();
    }
  }();
  return reason;
}

void check(cudaError_t err, const char* call) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(err));
}

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + ": " + cublasGetStatusString(status));
}

void sync() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

const bool kRequirement = [] {
  opd::bench::require_for_suite("CUDA", [] {
    const std::string& why = cuda_unavailable();
    return why.empty() ? why : "no CUDA device (" + why + ")";
  });
  return true;
}();

// Runs `body` (main runs no case when the cuda plugin does not serve); when it throws, reports
// the case skipped with the reason.
template <class F>
void run_on_cuda(benchmark::State& state, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

opd::TensorOptions on_cuda(ScalarType dtype) { return opd::TensorOptions(dtype).device(kCuda); }

// Device memory outside the dispatcher, for the references.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&ptr_, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { (void)cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// ---- bandwidth: add and sum against a device-to-device copy -------------------------------------

// A copy of `bytes` per iteration, which reads and writes them: 2 x bytes moved.
void device_memcpy(benchmark::State& state, int64_t bytes) {
  run_on_cuda(state, [&] {
    DeviceBuffer src(bytes), dst(bytes);
    auto copy = [&] {
      check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, nullptr),
            "cudaMemcpyAsync");
    };
    copy();  // warm-up, as the operators' cases have
    sync();
    for (auto _ : state) {
      copy();
      sync();
    }
    state.SetBytesProcessed(state.iterations() * 2 * bytes);
  });
}

// add reads two 1 GiB operands and writes one: 3 GiB moved, as a copy of 1.5 GiB.
void BM_CudaMemcpyAsAdd256M(benchmark::State& state) { device_memcpy(state, 3 * kBig * 4 / 2); }
BENCHMARK(BM_CudaMemcpyAsAdd256M)->UseRealTime()->Unit(benchmark::kMillisecond);

// sum reads one 1 GiB operand: as a copy of 0.5 GiB.
void BM_CudaMemcpyAsSum256M(benchmark::State& state) { device_memcpy(state, kBig * 4 / 2); }
BENCHMARK(BM_CudaMemcpyAsSum256M)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaAddOut256M(benchmark::State& state) {
  run_on_cuda(state, [&] {
    Tensor a = opd::ones({kBig}, on_cuda(ScalarType::Float32));
    Tensor b = opd::ones({kBig}, on_cuda(ScalarType::Float32));
    Tensor out = opd::empty({kBig}, on_cuda(ScalarType::Float32));
    opd::add_out(out, a, b);  // warm-up: the kernel's first launch loads it
    sync();
    for (auto _ : state) {
      opd::add_out(out, a, b);
      sync();
    }
    state.SetBytesProcessed(state.iterations() * 3 * kBig * 4);
  });
}
BENCHMARK(BM_CudaAddOut256M)->UseRealTime()->Unit(benchmark::kMillisecond);

// The functional form also allocates its 1 GiB result, from the caching allocator after the
// first iteration.
void BM_CudaAdd256M(benchmark::State& state) {
  run_on_cuda(state, [&] {
    Tensor a = opd::ones({kBig}, on_cuda(ScalarType::Float32));
    Tensor b = opd::ones({kBig}, on_cuda(ScalarType::Float32));
    (void)opd::add(a, b);  // warm-up: the kernel, and the result's block in the cache
    sync();
    for (auto _ : state) {
      Tensor c = opd::add(a, b);
      sync();
      benchmark::DoNotOptimize(c);
    }
    state.SetBytesProcessed(state.iterations() * 3 * kBig * 4);
  });
}
BENCHMARK(BM_CudaAdd256M)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaSum256M(benchmark::State& state) {
  run_on_cuda(state, [&] {
    Tensor a = opd::ones({kBig}, on_cuda(ScalarType::Float32));
    (void)opd::sum(a);  // warm-up
    sync();
    for (auto _ : state) {
      Tensor s = opd::sum(a);
      sync();
      benchmark::DoNotOptimize(s);
    }
    state.SetBytesProcessed(state.iterations() * kBig * 4);
  });
}
BENCHMARK(BM_CudaSum256M)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- host to device from pinned memory ----------------------------------------------------------

constexpr int64_t kCopyBytes = int64_t{256} << 20;

void BM_CudaCopyFromPinnedDirect(benchmark::State& state) {
  run_on_cuda(state, [&] {
    void* host = nullptr;
    check(cudaHostAlloc(&host, kCopyBytes, cudaHostAllocPortable), "cudaHostAlloc");
    DeviceBuffer dst(kCopyBytes);
    try {
      for (auto _ : state) {
        check(cudaMemcpyAsync(dst.get(), host, kCopyBytes, cudaMemcpyHostToDevice, nullptr),
              "cudaMemcpyAsync");
        sync();
      }
    } catch (...) {
      (void)cudaFreeHost(host);
      throw;
    }
    (void)cudaFreeHost(host);
    state.SetBytesProcessed(state.iterations() * kCopyBytes);
  });
}
BENCHMARK(BM_CudaCopyFromPinnedDirect)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaCopyFromPinnedDispatched(benchmark::State& state) {
  run_on_cuda(state, [&] {
    Tensor host =
        opd::empty({kCopyBytes}, opd::TensorOptions(ScalarType::UInt8).pinned_memory(true));
    Tensor dst = opd::empty({kCopyBytes}, on_cuda(ScalarType::UInt8));
    for (auto _ : state) {
      dst.copy_(host, /*non_blocking=*/true);
      sync();
    }
    state.SetBytesProcessed(state.iterations() * kCopyBytes);
  });
}
BENCHMARK(BM_CudaCopyFromPinnedDispatched)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- mm 8192 against cuBLAS called directly -----------------------------------------------------

// The references' own handle, on the default stream as the plugin's. Never destroyed: the CUDA
// runtime may be gone by the time static destructors run.
cublasHandle_t bench_blas_handle() {
  static cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    check(cublasCreate(&h), "cublasCreate");
    return h;
  }();
  return handle;
}

// Items processed: floating-point operations, so that items/s reads as FLOP/s.
constexpr int64_t kMmFlops = int64_t{2} * kMm * kMm * kMm;

void mm_dispatched(benchmark::State& state, ScalarType dtype) {
  run_on_cuda(state, [&] {
    Tensor a = opd::full({kMm, kMm}, 1.0, on_cuda(dtype));
    Tensor b = opd::full({kMm, kMm}, 0.5, on_cuda(dtype));
    (void)opd::mm(a, b);  // warm-up: the cuBLAS handle, its heuristics, the result's block
    sync();
    for (auto _ : state) {
      Tensor c = opd::mm(a, b);
      sync();
      benchmark::DoNotOptimize(c);
    }
    state.SetItemsProcessed(state.iterations() * kMmFlops);
  });
}

// The same product as mm_dispatched, row-major (C = A·B is cuBLAS's B·A, see Note [Row-major
// products in cuBLAS] in plugins/cuda/linalg_kernels.cpp). The operands are allocated and filled
// by the plugin as mm_dispatched's, so that both multiply the same values.
void mm_direct(benchmark::State& state, ScalarType dtype) {
  run_on_cuda(state, [&] {
    Tensor a = opd::full({kMm, kMm}, 1.0, on_cuda(dtype));
    Tensor b = opd::full({kMm, kMm}, 0.5, on_cuda(dtype));
    Tensor c = opd::empty({kMm, kMm}, on_cuda(dtype));
    cublasHandle_t h = bench_blas_handle();
    check(cublasSetStream(h, nullptr), "cublasSetStream");
    const float one = 1.0f, zero = 0.0f;
    auto gemm = [&] {
      if (dtype == ScalarType::Float32) {
        check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, kMm, kMm, kMm, &one,
                          static_cast<const float*>(b.data_ptr()), kMm,
                          static_cast<const float*>(a.data_ptr()), kMm, &zero,
                          static_cast<float*>(c.data_ptr()), kMm),
              "cublasSgemm");
      } else {
        check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, kMm, kMm, kMm, &one, b.data_ptr(),
                           CUDA_R_16BF, kMm, a.data_ptr(), CUDA_R_16BF, kMm, &zero, c.data_ptr(),
                           CUDA_R_16BF, kMm, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              "cublasGemmEx");
      }
    };
    gemm();
    sync();
    for (auto _ : state) {
      gemm();
      sync();
    }
    state.SetItemsProcessed(state.iterations() * kMmFlops);
  });
}

void BM_CudaSgemmDirect8192(benchmark::State& state) { mm_direct(state, ScalarType::Float32); }
BENCHMARK(BM_CudaSgemmDirect8192)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaMmFloat32Dispatched8192(benchmark::State& state) {
  mm_dispatched(state, ScalarType::Float32);
}
BENCHMARK(BM_CudaMmFloat32Dispatched8192)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaBf16GemmExDirect8192(benchmark::State& state) {
  mm_direct(state, ScalarType::BFloat16);
}
BENCHMARK(BM_CudaBf16GemmExDirect8192)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaMmBFloat16Dispatched8192(benchmark::State& state) {
  mm_dispatched(state, ScalarType::BFloat16);
}
BENCHMARK(BM_CudaMmBFloat16Dispatched8192)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- the tiny add: dispatch + launch against a bare launch --------------------------------------

// Launches between two waits for the device. The waits keep the launch queue from filling (a
// full queue would make a launch wait for the device) and are not timed.
constexpr int kLaunchesPerDrain = 256;

// Times the host side of each call of `launch`, which queues device work (manual time), after
// one untimed call (CUDA loads a module's kernels on their first launch).
template <class F>
void time_launches(benchmark::State& state, F&& launch) {
  launch();
  sync();
  int queued = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    launch();
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    if (++queued == kLaunchesPerDrain) {
      sync();
      queued = 0;
    }
  }
  sync();
}

void BM_CudaTinyAddBareLaunch(benchmark::State& state) {
  run_on_cuda(state, [&] {
    DeviceBuffer a(sizeof(float)), b(sizeof(float)), out(sizeof(float));
    check(cudaMemset(a.get(), 0, sizeof(float)), "cudaMemset");
    check(cudaMemset(b.get(), 0, sizeof(float)), "cudaMemset");
    time_launches(state, [&] {
      check(static_cast<cudaError_t>(opd::bench::launch_bare_add(
                static_cast<const float*>(a.get()), static_cast<const float*>(b.get()),
                static_cast<float*>(out.get()), 1)),
            "bare_add_kernel");
    });
  });
}
BENCHMARK(BM_CudaTinyAddBareLaunch)->UseManualTime();

// Into an existing result: the dispatcher, the shared metadata step and the launch.
void BM_CudaTinyAddOutDispatched(benchmark::State& state) {
  run_on_cuda(state, [&] {
    Tensor a = opd::ones({1}, on_cuda(ScalarType::Float32));
    Tensor b = opd::ones({1}, on_cuda(ScalarType::Float32));
    Tensor out = opd::empty({1}, on_cuda(ScalarType::Float32));
    sync();
    time_launches(state, [&] { opd::add_out(out, a, b); });
  });
}
BENCHMARK(BM_CudaTinyAddOutDispatched)->UseManualTime();

// The functional form: its result's allocation and release (the caching allocator's) included.
void BM_CudaTinyAddDispatched(benchmark::State& state) {
  run_on_cuda(state, [&] {
    Tensor a = opd::ones({1}, on_cuda(ScalarType::Float32));
    Tensor b = opd::ones({1}, on_cuda(ScalarType::Float32));
    sync();
    time_launches(state, [&] {
      Tensor c = opd::add(a, b);
      benchmark::DoNotOptimize(c);
    });
  });
}
BENCHMARK(BM_CudaTinyAddDispatched)->UseManualTime();

// ---- allocation: empty() against cudaMalloc / cudaFree ------------------------------------------

// Per iteration, kAllocs allocations with sizes cycling through kAllocBytes; kLiveAllocs stay
// alive at a time, the oldest freed before each new one is made. 7 sizes over 8 slots, so that a
// slot does not always get the same size.
constexpr int kAllocs = 10000;
constexpr int kLiveAllocs = 8;
constexpr std::array<int64_t, 7> kAllocBytes = {256,      4 << 10, 512,     1 << 20,
                                                64 << 10, 8 << 20, 16 << 10};

void BM_CudaAllocFreeRaw(benchmark::State& state) {
  run_on_cuda(state, [&] {
    std::array<void*, kLiveAllocs> live{};
    for (auto _ : state) {
      for (int i = 0; i < kAllocs; ++i) {
        void*& slot = live[i % kLiveAllocs];
        if (slot != nullptr) check(cudaFree(slot), "cudaFree");
        check(cudaMalloc(&slot, kAllocBytes[i % kAllocBytes.size()]), "cudaMalloc");
      }
      for (void*& slot : live) {
        check(cudaFree(slot), "cudaFree");
        slot = nullptr;
      }
    }
    state.SetItemsProcessed(state.iterations() * kAllocs);
  });
}
BENCHMARK(BM_CudaAllocFreeRaw)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaAllocFreeDispatched(benchmark::State& state) {
  run_on_cuda(state, [&] {
    std::array<Tensor, kLiveAllocs> live;
    for (auto _ : state) {
      for (int i = 0; i < kAllocs; ++i) {
        // Released before the next is made, as the raw case does.
        Tensor& slot = live[i % kLiveAllocs];
        slot = Tensor();
        slot = opd::empty({kAllocBytes[i % kAllocBytes.size()]}, on_cuda(ScalarType::UInt8));
      }
      for (Tensor& t : live) t = Tensor();
    }
    state.SetItemsProcessed(state.iterations() * kAllocs);
  });
}
BENCHMARK(BM_CudaAllocFreeDispatched)->UseRealTime()->Unit(benchmark::kMillisecond);

const bool kRatios = [] {
  // Time ratios: a copy of the same bytes / the operator is the operator's share of the copy's
  // bandwidth.
  opd::bench::add_ratio("BM_CudaMemcpyAsAdd256M", "BM_CudaAddOut256M", ">= 0.9 (bandwidth of add)");
  opd::bench::add_ratio("BM_CudaMemcpyAsAdd256M", "BM_CudaAdd256M",
                        "report (add allocating its result)");
  opd::bench::add_ratio("BM_CudaMemcpyAsSum256M", "BM_CudaSum256M", ">= 0.85 (bandwidth of sum)");
  opd::bench::add_ratio("BM_CudaSgemmDirect8192", "BM_CudaMmFloat32Dispatched8192", ">= 0.98");
  opd::bench::add_ratio("BM_CudaBf16GemmExDirect8192", "BM_CudaMmBFloat16Dispatched8192",
                        ">= 0.98");
  // Inverted (the dispatched call over the bare launch): a cost, goal <= 1.5.
  opd::bench::add_ratio("BM_CudaTinyAddOutDispatched", "BM_CudaTinyAddBareLaunch",
                        "<= 1.5 (dispatch + launch)");
  opd::bench::add_ratio("BM_CudaTinyAddDispatched", "BM_CudaTinyAddBareLaunch",
                        "report (with allocation)");
  opd::bench::add_ratio("BM_CudaAllocFreeDispatched", "BM_CudaAllocFreeRaw",
                        "report (caching allocator)");
  opd::bench::add_ratio("BM_CudaCopyFromPinnedDirect", "BM_CudaCopyFromPinnedDispatched",
                        "report (bandwidth of a non-blocking copy from pinned memory)");
  return true;
}();

}  // namespace
