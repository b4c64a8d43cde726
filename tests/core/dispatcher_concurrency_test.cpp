// Registering, overriding and deregistering while other threads dispatch. Runs under
// ThreadSanitizer in CI (label `concurrency`).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd {
namespace {

int64_t kernel_one(const Tensor&) { return 1; }
int64_t kernel_two(const Tensor&) { return 2; }

Tensor cpu_tensor() {
  static float data[2] = {1, 2};
  return from_blob(data, std::vector<int64_t>{2}, ScalarType::Float32);
}

TEST(DispatcherConcurrency, OverrideAndRestoreWhileTwoThreadsDispatch) {
  Library def(Library::DEF, "test_concurrency");
  def.def("pick(Tensor x) -> int");
  Library base(Library::IMPL, "test_concurrency", DispatchKey::CPU);
  base.impl("pick", &kernel_one);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency::pick", "")
                .typed<int64_t(const Tensor&)>();

  std::atomic<bool> done{false};
  std::atomic<int64_t> calls{0}, unexpected{0}, saw_two{0};
  auto dispatcher_thread = [&](bool boxed) {
    Tensor x = cpu_tensor();
    auto untyped = Dispatcher::singleton().find_schema_or_throw("test_concurrency::pick", "");
    while (!done.load(std::memory_order_acquire)) {
      int64_t r;
      if (boxed) {
        Stack s{IValue(x)};
        untyped.call_boxed(&s);
        r = s.back().to_int();
      } else {
        r = op.call(x);
      }
      if (r == 2) saw_two.fetch_add(1, std::memory_order_relaxed);
      if (r != 1 && r != 2) unexpected.fetch_add(1, std::memory_order_relaxed);
      calls.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread t1(dispatcher_thread, false);
  std::thread t2(dispatcher_thread, true);
  for (int i = 0; i < 10000; ++i) {
    Library override_lib(Library::IMPL, "test_concurrency", DispatchKey::CPU);
    override_lib.impl("pick", &kernel_two);
    if (i % 1000 == 0) std::this_thread::yield();
  }  // each destruction restores kernel_one
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();

  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GT(calls.load(), 0);
  EXPECT_EQ(op.call(cpu_tensor()), 1);
  Dispatcher::singleton().check_invariants();
  // With no call in flight, everything replaced can be freed.
  Dispatcher::singleton().reclaim();
  EXPECT_EQ(Dispatcher::singleton().retired_count(), 0u);
}

TEST(DispatcherConcurrency, DefiningOtherOperatorsWhileDispatching) {
  Library def(Library::DEF, "test_concurrency_b");
  def.def("pick(Tensor x) -> int");
  def.impl("pick", DispatchKey::CPU, &kernel_one);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_b::pick", "")
                .typed<int64_t(const Tensor&)>();
  std::atomic<bool> done{false};
  std::atomic<int64_t> wrong{0};
  std::thread reader([&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) {
      if (op.call(x) != 1) wrong.fetch_add(1);
    }
  });
  for (int i = 0; i < 2000; ++i) {
    Library frag(Library::FRAGMENT, "test_concurrency_b");
    frag.def("other" + std::to_string(i % 7) + "(Tensor x) -> int", &kernel_two);
  }
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(wrong.load(), 0);
  Dispatcher::singleton().check_invariants();
}

TEST(DispatcherConcurrency, ReclaimWaitsForCallsInFlight) {
  Dispatcher::singleton().reclaim();  // what earlier tests retired, with no call in flight
  ASSERT_EQ(Dispatcher::singleton().retired_count(), 0u);
  Library def(Library::DEF, "test_concurrency_c");
  def.def("wait(Tensor x) -> int");
  std::atomic<bool> entered{false}, release{false};
  def.impl("wait", DispatchKey::CPU, [&](const Tensor&) -> int64_t {
    entered.store(true);
    while (!release.load()) std::this_thread::yield();
    return 7;
  });
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_c::wait", "")
                .typed<int64_t(const Tensor&)>();
  int64_t result = 0;
  std::thread caller([&] { result = op.call(cpu_tensor()); });
  while (!entered.load()) std::this_thread::yield();
  {
    Library replacement(Library::IMPL, "test_concurrency_c", DispatchKey::CPU);
    replacement.impl("wait", [](const Tensor&) -> int64_t { return 8; });
  }
  // The running kernel was replaced and restored; nothing retired may be freed while it runs.
  size_t before = Dispatcher::singleton().retired_count();
  EXPECT_GT(before, 0u);
  EXPECT_EQ(Dispatcher::singleton().reclaim(), 0u);
  EXPECT_EQ(Dispatcher::singleton().reclaim(), 0u);  // the caller is still in the same call
  EXPECT_EQ(Dispatcher::singleton().retired_count(), before);
  release.store(true);
  caller.join();
  EXPECT_EQ(result, 7);
  EXPECT_GE(Dispatcher::singleton().reclaim(), before);
  EXPECT_EQ(Dispatcher::singleton().retired_count(), 0u);
}

}  // namespace
}  // namespace opd

namespace opd {
namespace {

TEST(DispatcherConcurrency, ContinuousCallerDoesNotHoldReclamationBack) {
  Library def(Library::DEF, "test_concurrency_d");
  def.def("pick(Tensor x) -> int");
  def.impl("pick", DispatchKey::CPU, &kernel_one);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_d::pick", "")
                .typed<int64_t(const Tensor&)>();
  std::atomic<bool> done{false};
  std::thread caller([&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) op.call(x);
  });
  {
    Library replacement(Library::IMPL, "test_concurrency_d", DispatchKey::CPU);
    replacement.impl("pick", &kernel_two);
  }
  // The caller is almost always inside a call, but it leaves each one quickly: after at most a
  // few attempts, everything retired is freed while it keeps calling.
  bool drained = false;
  for (int i = 0; i < 1000 && !drained; ++i) {
    Dispatcher::singleton().reclaim();
    drained = Dispatcher::singleton().retired_count() == 0;
    if (!drained) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  done.store(true, std::memory_order_release);
  caller.join();
  EXPECT_TRUE(drained);
}

}  // namespace
}  // namespace opd
