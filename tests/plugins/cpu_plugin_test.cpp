// The CPU plugin as a user meets it: loaded through the plugin manager, its factories and their
// errors, its random numbers, resize_, and its life cycle with a running thread pool: after an
// unload with tensors alive the library stays mapped, and it leaves /proc/self/maps once the
// last of them goes. The thread pool itself (plugins/cpu/parallel.cpp) is compiled into this
// test too and exercised directly.

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/philox.h"
#include "cpu/parallel.h"
#include "opd/dispatch_observer.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/generator.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::is_mapped;
using fixtures::wait_for_state;
using ::testing::HasSubstr;

const char* const kManifest = OPD_CPU_PLUGIN_MANIFEST;
const char* const kLibrary = OPD_CPU_PLUGIN_LIBRARY;

// Both pools, the plugin's and this test's copy, get 4 threads whatever the machine: each reads
// the variable once, when it first needs it, after this ran.
const bool kFourThreads = ::setenv("OPD_NUM_THREADS", "4", 1) == 0;

// Threads of this process.
size_t thread_count() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

// The message of the `E` that `f` throws; a test failure when it throws nothing.
template <class E = Error, class F>
std::string error_of(F f) {
  try {
    f();
    ADD_FAILURE() << "expected an error";
  } catch (const E& e) {
    return e.msg();
  }
  return {};
}

// Loads the CPU plugin for each test and checks that the test left it unloaded and unmapped.
class CpuPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kFourThreads);
    ASSERT_FALSE(is_mapped(kLibrary)) << "an earlier test left the cpu plugin mapped";
    PluginStatus s = plugins().load(kManifest);
    ASSERT_EQ(s.state, PluginState::Loaded) << s.reason;
  }
  void TearDown() override {
    if (plugins().status("cpu").state == PluginState::Loaded) plugins().unload("cpu");
    EXPECT_EQ(wait_for_state("cpu", PluginState::Unloaded).state, PluginState::Unloaded);
    EXPECT_FALSE(is_mapped(kLibrary));
  }
};

TEST_F(CpuPluginTest, StoragesAre64ByteAlignedAndKeepThePluginAsOwner) {
  std::vector<Tensor> keep;
  for (int64_t n : {1, 3, 17, 1000, 100003}) {
    for (ScalarType t : {kByte, kInt, kFloat, kDouble}) {
      Tensor x = opd::empty({n}, t);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(x.data_ptr()) % 64, 0u) << n << " " << t;
      EXPECT_EQ(x.storage().nbytes(), static_cast<size_t>(n) * element_size(t));
      EXPECT_NE(x.storage().owner(), nullptr);
      EXPECT_EQ(x.device(), Device(DeviceType::CPU));
      keep.push_back(x);
    }
  }
  // Empty tensors have a storage too, of no bytes.
  Tensor e = opd::empty({0, 3});
  EXPECT_TRUE(e.storage().defined());
  EXPECT_EQ(e.storage().nbytes(), 0u);
  EXPECT_EQ(e.numel(), 0);
  // empty_strided's storage covers what its strides reach: (1 + 1*1 + 2*2) floats.
  Tensor s = opd::empty_strided({2, 3}, {1, 2});
  EXPECT_EQ(s.strides().vec(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(s.storage().nbytes(), 24u);
  Tensor cl = opd::empty({2, 3, 4, 5}, TensorOptions(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(cl.strides().vec(), (std::vector<int64_t>{60, 1, 15, 3}));
}

// The operators each call dispatches, outermost and nested.
class RecordOperators : public DispatchObserver {
 public:
  void on_enter(const DispatchHop& hop) override {
    std::lock_guard<std::mutex> lock(mutex_);
    names_.push_back(hop.op.operator_name().to_string());
  }
  std::vector<std::string> names() {
    std::lock_guard<std::mutex> lock(mutex_);
    return names_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> names_;
};

// Note [Output allocation]: a kernel's new result and its converted inputs come from the CPU
// allocator directly; only the copy that converts goes through the dispatcher.
TEST_F(CpuPluginTest, KernelOutputsComeFromTheAllocatorWithoutDispatchingEmpty) {
  Tensor a = opd::empty({2, 3}, kInt).fill_(1);
  Tensor b = opd::empty({3}).fill_(1);
  auto recorder = std::make_shared<RecordOperators>();
  Tensor c;
  {
    auto guard = set_dispatch_observer(recorder);
    c = opd::add(a, b);  // a is converted to Float
  }
  EXPECT_EQ(recorder->names(), (std::vector<std::string>{"aten::add.Tensor", "aten::copy_"}));
  EXPECT_EQ(c.scalar_type(), kFloat);
  EXPECT_EQ(c.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data_ptr()) % 64, 0u);
  EXPECT_NE(c.storage().owner(), nullptr);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(c.data_ptr<float>()[i], 2.0f);
}

TEST_F(CpuPluginTest, UnloadWithTensorsAliveStopsThePoolAndUnmapsAfterTheLastTensor) {
  const size_t threads_before = thread_count();
  // Large enough to be split over the pool's workers, which start now.
  Tensor kept = opd::rand({1 << 20});
  Tensor other = opd::arange(0, 1 << 20);
  EXPECT_EQ(thread_count(), threads_before + 3);

  PluginStatus s = plugins().unload("cpu");
  EXPECT_EQ(s.state, PluginState::Unloading);
  // The shutdown hook joined the workers: no thread runs the plugin's code any more.
  EXPECT_EQ(thread_count(), threads_before);
  EXPECT_TRUE(is_mapped(kLibrary));
  EXPECT_FLOAT_EQ(static_cast<float>(other.data_ptr<int64_t>()[12345]), 12345.0f);

  other = Tensor();
  EXPECT_TRUE(is_mapped(kLibrary));
  float v = kept.data_ptr<float>()[(1 << 20) - 1];  // still the plugin's memory, still valid
  EXPECT_TRUE(v >= 0.0f && v < 1.0f);
  kept = Tensor();  // the last storage: its deleter runs in the plugin, then the library goes
  EXPECT_EQ(wait_for_state("cpu", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(kLibrary));
}

TEST_F(CpuPluginTest, RandAndRandnRepeatUnderManualSeedWhateverTheThreadSplit) {
  manual_seed(1234);
  Tensor a = opd::rand({100000});
  Tensor b = opd::randn({3, 1000}, kDouble);
  manual_seed(1234);
  Tensor a2 = opd::rand({100000});
  Tensor b2 = opd::randn({3, 1000}, kDouble);
  Tensor a3 = opd::rand({100000});
  EXPECT_EQ(std::memcmp(a.data_ptr(), a2.data_ptr(), a.storage().nbytes()), 0);
  EXPECT_EQ(std::memcmp(b.data_ptr(), b2.data_ptr(), b.storage().nbytes()), 0);
  EXPECT_NE(std::memcmp(a.data_ptr(), a3.data_ptr(), a.storage().nbytes()), 0);

  // Element i is counter i of the seed (Note [Random numbers per element]), however the pool
  // split the work: recompute every value on this thread.
  const float* pa = a.data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    ASSERT_EQ(pa[i], philox::uniform_float(philox::philox4x32_10(1234, i).v[0])) << i;
  }
  const uint64_t b_offset = (100000 + 3) / 4 * 4;
  const double* pb = b.data_ptr<double>();
  for (int64_t i = 0; i < b.numel(); ++i) {
    ASSERT_EQ(pb[i], philox::normal_double(philox::philox4x32_10(1234, b_offset + i))) << i;
  }

  // The distributions: uniform on [0, 1), standard normal.
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    ASSERT_TRUE(pa[i] >= 0.0f && pa[i] < 1.0f);
    sum += pa[i];
  }
  EXPECT_NEAR(sum / a.numel(), 0.5, 0.01);
  sum = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    sum += pb[i];
    sum_sq += pb[i] * pb[i];
  }
  EXPECT_NEAR(sum / b.numel(), 0.0, 0.1);
  EXPECT_NEAR(sum_sq / b.numel(), 1.0, 0.1);
}

TEST_F(CpuPluginTest, ArangeFollowsPyTorchsDtypeAndLength) {
  Tensor i = opd::arange(0, 10, 3);
  EXPECT_EQ(i.scalar_type(), kLong);
  EXPECT_EQ(std::vector<int64_t>(i.data_ptr<int64_t>(), i.data_ptr<int64_t>() + i.numel()),
            (std::vector<int64_t>{0, 3, 6, 9}));
  Tensor down = opd::arange(10, 0, -3);
  EXPECT_EQ(std::vector<int64_t>(down.data_ptr<int64_t>(), down.data_ptr<int64_t>() + 4),
            (std::vector<int64_t>{10, 7, 4, 1}));
  EXPECT_EQ(down.numel(), 4);
  Tensor f = opd::arange(0, 1, 0.25);
  EXPECT_EQ(f.scalar_type(), kFloat);
  EXPECT_EQ(f.numel(), 4);
  EXPECT_FLOAT_EQ(f.data_ptr<float>()[3], 0.75f);
  Tensor d = opd::arange(1, 2.5, 0.5, kDouble);
  EXPECT_EQ(d.numel(), 3);
  EXPECT_DOUBLE_EQ(d.data_ptr<double>()[2], 2.0);
  Tensor big = opd::arange(0, 300000, 1, kInt);
  for (int32_t k = 0; k < 300000; ++k) ASSERT_EQ(big.data_ptr<int32_t>()[k], k);
  EXPECT_EQ(opd::arange(5, 5).numel(), 0);
}

TEST_F(CpuPluginTest, FactoryErrorsUsePyTorchsTexts) {
  EXPECT_THAT(error_of([] {
                opd::empty({-1, 2});
              }),
              HasSubstr("Trying to create tensor with negative dimension -1: [-1, 2]"));
  EXPECT_THAT(error_of([] { opd::arange(0, 10, 0); }), HasSubstr("step must be nonzero"));
  EXPECT_THAT(error_of([] { opd::arange(0, 10, -1); }),
              HasSubstr("upper bound and larger bound inconsistent with step sign"));
  EXPECT_THAT(error_of<Error>([] { opd::rand({2}, kLong); }),
              HasSubstr("\"rand\" not implemented for 'Long'"));
  EXPECT_THAT(error_of<Error>([] { opd::randn({2}, kInt); }),
              HasSubstr("\"randn\" not implemented for 'Int'"));
  // Pinned memory comes from a device plugin through _opd_empty_pinned (Note [Pinned memory]);
  // only cpu is loaded here.
  EXPECT_THAT(error_of([] { opd::empty({2}, TensorOptions().pinned_memory(true)); }),
              HasSubstr("Could not run 'aten::_opd_empty_pinned' with arguments from the 'CUDA' "
                        "backend"));
  EXPECT_THAT(error_of([] { opd::empty({2}, TensorOptions().layout(Layout::Sparse)); }),
              HasSubstr("only the Strided layout is supported"));
  EXPECT_THAT(error_of([] {
                opd::empty_strided({2, 3}, {1});
              }),
              HasSubstr("dimensionality of sizes (2) must match dimensionality of strides (1)"));
  EXPECT_THAT(error_of([] { opd::_local_scalar_dense(opd::empty({2})); }),
              HasSubstr("a Tensor with 2 elements cannot be converted to Scalar"));
}

TEST_F(CpuPluginTest, LocalScalarDenseReturnsTheElementByDtypeCategory) {
  Tensor l = opd::arange(7, 8);
  Scalar s = opd::_local_scalar_dense(l);
  EXPECT_TRUE(s.is_integral(false));
  EXPECT_EQ(s.to<int64_t>(), 7);
  Tensor f = opd::arange(0.5, 1.0, 1.0, kDouble);
  s = opd::_local_scalar_dense(f);
  EXPECT_TRUE(s.is_floating_point());
  EXPECT_EQ(s.to<double>(), 0.5);
  Tensor b = opd::empty({1}, kBool);
  b.data_ptr<bool>()[0] = true;
  s = opd::_local_scalar_dense(b);
  EXPECT_TRUE(s.is_boolean());
  EXPECT_TRUE(s.to<bool>());
}

TEST_F(CpuPluginTest, ResizeKeepsDataWithinCapacityAndCopiesWhenGrowingPastIt) {
  Tensor t = opd::arange(0, 12, 1, kFloat);
  void* data = t.data_ptr();
  t.resize_({2, 3});
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.data_ptr(), data);
  t.resize_({3, 4});  // back within the 12 elements the storage holds
  EXPECT_EQ(t.data_ptr(), data);
  EXPECT_EQ(t.data_ptr<float>()[11], 11.0f);

  t.resize_({5, 5});
  EXPECT_NE(t.data_ptr(), data);
  EXPECT_EQ(t.storage().nbytes(), 25 * sizeof(float));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
  for (int k = 0; k < 12; ++k) EXPECT_EQ(t.data_ptr<float>()[k], static_cast<float>(k));

  Tensor nchw = opd::empty({0});
  nchw.resize_({2, 3, 4, 5}, MemoryFormat::ChannelsLast);
  EXPECT_EQ(nchw.strides().vec(), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(nchw.storage().nbytes(), 120 * sizeof(float));
  EXPECT_THAT(error_of([&] { t.resize_({-1}); }),
              HasSubstr("Trying to create tensor with negative dimension -1: [-1]"));
}

// Unloading, loading and reloading the cpu plugin while three threads call add (large enough
// for the pool), mm and matmul and keep their last results. A kernel still running when its
// plugin is unloaded must still hand out storages that own the library (Note [Plugin self
// reference] in opd/plugin.h), so nothing is unmapped under a live tensor or a running kernel.
// Every call gives the right values or, while cpu is unloaded, a NotImplementedError; results
// kept past an unload stay readable. Then reload alone: never a missing kernel or a wrong value.
TEST_F(CpuPluginTest, UnloadLoadAndReloadWhileThreadsCallAddMmAndMatmul) {
  // matmul is a composite of mm: the composite plugin, next to cpu in the build, serves it.
  const std::string composite =
      (std::filesystem::path(kManifest).parent_path() / "composite.yaml").string();
  ASSERT_EQ(plugins().load(composite).state, PluginState::Loaded);
  // The callers start before the library is next mapped (Note [Threads left running]).
  plugins().unload("cpu");
  ASSERT_EQ(wait_for_state("cpu", PluginState::Unloaded).state, PluginState::Unloaded);

  constexpr int64_t kBig = 1 << 20, kN = 16;
  static std::vector<float> ones_big(kBig, 1.0f), twos_big(kBig, 2.0f);
  static std::vector<float> ones_sq(kN * kN, 1.0f), ones_batch(2 * kN * kN, 1.0f);
  const Tensor a = from_blob(ones_big.data(), std::vector<int64_t>{kBig}, ScalarType::Float32);
  const Tensor b = from_blob(twos_big.data(), std::vector<int64_t>{kBig}, ScalarType::Float32);
  const Tensor sq = from_blob(ones_sq.data(), std::vector<int64_t>{kN, kN}, ScalarType::Float32);
  const Tensor batch =
      from_blob(ones_batch.data(), std::vector<int64_t>{2, kN, kN}, ScalarType::Float32);
  struct Caller {
    std::function<Tensor()> call;
    std::function<bool(const Tensor&)> correct;
    std::mutex mutex;
    Tensor kept;  // guarded by mutex: its last result
    std::atomic<int64_t> ok{0}, not_implemented{0}, reload_phase_missing{0};
  };
  auto all_equal = [](const Tensor& t, int64_t n, float want, int64_t step) {
    if (!t.defined() || t.numel() != n) return false;
    const float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < n; i += step) {
      if (p[i] != want) return false;
    }
    return p[n - 1] == want;
  };
  Caller callers[3];
  callers[0].call = [&] { return opd::add(a, b); };
  callers[0].correct = [&](const Tensor& t) { return all_equal(t, kBig, 3.0f, 4099); };
  callers[1].call = [&] { return opd::mm(sq, sq); };
  callers[1].correct = [&](const Tensor& t) { return all_equal(t, kN * kN, kN, 1); };
  callers[2].call = [&] { return opd::matmul(batch, sq); };
  callers[2].correct = [&](const Tensor& t) { return all_equal(t, 2 * kN * kN, kN, 1); };

  std::atomic<bool> stop{false}, reload_only{false};
  std::mutex errors_mutex;
  std::vector<std::string> errors;  // guarded by errors_mutex
  auto fail = [&](std::string e) {
    std::lock_guard lock(errors_mutex);
    if (errors.size() < 10) errors.push_back(std::move(e));
  };
  std::vector<std::thread> threads;
  for (Caller& c : callers) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        const bool reloading = reload_only.load();
        try {
          Tensor r = c.call();
          if (!c.correct(r)) fail("wrong value");
          c.ok++;
          std::lock_guard lock(c.mutex);
          c.kept = std::move(r);
        } catch (const NotImplementedError& e) {
          (reloading ? c.reload_phase_missing : c.not_implemented)++;
          if (reloading) fail(std::string("during reload: ") + e.what());
        } catch (const std::exception& e) {
          fail(e.what());
        }
      }
    });
  }
  auto kept_results_are_readable = [&] {
    for (Caller& c : callers) {
      Tensor t;
      {
        std::lock_guard lock(c.mutex);
        t = c.kept;
      }
      if (t.defined() && !c.correct(t)) fail("a result kept past the unload changed");
    }
  };
  auto calls_so_far = [&] {
    int64_t n = 0;
    for (Caller& c : callers) n += c.ok.load() + c.not_implemented.load();
    return n;
  };
  auto wait_for_calls = [&](int64_t more) {
    int64_t target = calls_so_far() + more;
    while (calls_so_far() < target) std::this_thread::yield();
  };

  ASSERT_EQ(plugins().load(kManifest).state, PluginState::Loaded);
  int cycles = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (cycles < 5 || std::chrono::steady_clock::now() < until) {
    plugins().unload("cpu");
    kept_results_are_readable();
    wait_for_calls(3);
    ASSERT_EQ(plugins().load(kManifest).state, PluginState::Loaded);
    wait_for_calls(3);
    ASSERT_EQ(plugins().reload("cpu").state, PluginState::Loaded);
    wait_for_calls(3);
    ++cycles;
  }
  reload_only = true;
  until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_EQ(plugins().reload("cpu").state, PluginState::Loaded);
    wait_for_calls(3);
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  kept_results_are_readable();

  int64_t not_implemented = 0;
  for (Caller& c : callers) {
    EXPECT_GT(c.ok.load(), 0);  // each caller saw the plugin serving ...
    EXPECT_EQ(c.reload_phase_missing.load(), 0);
    not_implemented += c.not_implemented.load();
  }
  EXPECT_GT(not_implemented, 0);  // ... and unloaded
  EXPECT_TRUE(errors.empty()) << ::testing::PrintToString(errors);
  RecordProperty("cycles", cycles);
  for (Caller& c : callers) c.kept = Tensor();
  plugins().unload("composite");
}

// The pool itself, from this test's own copy of parallel.cpp.
TEST(CpuParallelFor, CoversTheRangeOnceInChunksOfAtLeastTheGrain) {
  std::vector<std::atomic<int>> seen(100000);
  std::mutex m;
  std::set<std::thread::id> ids;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  cpu::parallel_for(0, 100000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[i].fetch_add(1);
    std::lock_guard lock(m);
    chunks.emplace_back(b, e);
    ids.insert(std::this_thread::get_id());
  });
  for (auto& s : seen) ASSERT_EQ(s.load(), 1);
  for (auto [b, e] : chunks) {
    if (e != 100000) {
      EXPECT_GE(e - b, 1000);
    }
  }
  EXPECT_LE(static_cast<int64_t>(ids.size()), cpu::get_num_threads());
  // Nothing to do, or one grain: inline on the caller.
  int calls = 0;
  cpu::parallel_for(5, 5, 1, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  const std::thread::id caller = std::this_thread::get_id();
  cpu::parallel_for(0, 10, 100, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 10);
    EXPECT_EQ(std::this_thread::get_id(), caller);
  });
  EXPECT_EQ(calls, 1);
}

TEST(CpuParallelFor, RethrowsAWorkersExceptionInTheCaller) {
  ASSERT_GT(cpu::get_num_threads(), 1);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 20; ++round) {
    // The caller's chunks wait until a worker has thrown, so the error surely crosses threads.
    std::atomic<bool> thrown{false};
    try {
      cpu::parallel_for(0, 64, 1, [&](int64_t, int64_t) {
        if (std::this_thread::get_id() != caller) {
          thrown = true;
          throw std::out_of_range("chunk failed");
        }
        while (!thrown) std::this_thread::yield();
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "chunk failed");
    }
  }
}

TEST(CpuParallelFor, NestedCallsRunInlineAndManyCallersShareThePool) {
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      cpu::parallel_for(0, 64, 1, [&](int64_t b, int64_t e) {
        EXPECT_TRUE(cpu::in_parallel_region());
        const auto outer = std::this_thread::get_id();
        cpu::parallel_for(0, 1000, 1, [&](int64_t ib, int64_t ie) {
          EXPECT_EQ(std::this_thread::get_id(), outer);
          EXPECT_EQ(ib, 0);
          EXPECT_EQ(ie, 1000);
          total.fetch_add((e - b) * (ie - ib));
        });
      });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 64 * 1000);
  EXPECT_FALSE(cpu::in_parallel_region());
}

TEST(CpuParallelFor, AfterShutdownRunsInlineUntilEnabledAgain) {
  cpu::parallel_for(0, 1 << 16, 1, [](int64_t, int64_t) {});
  const size_t with_pool = thread_count();
  cpu::shutdown_pool();
  EXPECT_EQ(thread_count(), with_pool - static_cast<size_t>(cpu::get_num_threads() - 1));
  std::set<std::thread::id> ids;
  cpu::parallel_for(0, 1 << 16, 1,
                    [&](int64_t, int64_t) { ids.insert(std::this_thread::get_id()); });
  EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
  cpu::enable_pool();
  std::atomic<int64_t> n{0};
  cpu::parallel_for(0, 1 << 16, 1, [&](int64_t b, int64_t e) { n.fetch_add(e - b); });
  EXPECT_EQ(n.load(), 1 << 16);
  EXPECT_EQ(thread_count(), with_pool);
}

}  // namespace
}  // namespace opd
