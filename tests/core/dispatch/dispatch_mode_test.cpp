// Dispatch modes (opd/dispatch_mode.h, Note [Dispatch modes]): a mode sees the calls below
// autograd, modes nest, a mode runs popped, an exception leaves the stack as it was, the stack
// is per thread, and the Python key's fallback reaches the subclass handler without a mode.

#include "opd/dispatch_mode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dispatch_helpers.h"
#include "opd/error.h"

namespace opd {
namespace {

using DK = DispatchKey;
using test_util::def;
using test_util::g_trace;
using test_util::handle;
using test_util::impl;
using test_util::on;
using test_util::Reg;
using test_util::tagged;
using ::testing::ElementsAre;

// A mode that records "<name>:<operator>" and the key set it got, then calls the operator again
// (reaching the next mode, or below the Python key from the last).
struct RecordingMode : DispatchMode {
  explicit RecordingMode(std::string name) : name(std::move(name)) {}
  void dispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) override {
    g_trace.push_back(name + ":" + op.operator_name().to_string());
    seen_keys.push_back(keys);
    stack_len_inside = dispatch_mode_stack_len();
    if (before_call) before_call();
    op.call_boxed(stack);
  }
  std::string name;
  std::vector<DispatchKeySet> seen_keys;
  size_t stack_len_inside = 0;
  std::function<void()> before_call;
};

Tensor autograd_below(DispatchKeySet ks, const Tensor& x);

// modes::f has a CPU kernel and an autograd kernel that records itself and redispatches below
// autograd, as the autograd plugin's kernels do.
struct ModeOps {
  const OperatorName f{"test_dispatch_modes::f", ""};
  Reg d = def("test_dispatch_modes::f(Tensor x) -> Tensor");
  Reg cpu = impl(f, DK::CPU, tagged("cpu"));
  Reg ag = impl(f, DK::Autograd, &autograd_below);
};

Tensor autograd_below(DispatchKeySet ks, const Tensor& x) {
  g_trace.push_back("autograd");
  AutoDispatchBelowAutograd guard;
  return handle({"test_dispatch_modes::f", ""})
      .typed<Tensor(const Tensor&)>()
      .redispatch(ks - kAutogradKeySet, x);
}

std::string run(const OperatorName& name, const Tensor& x) {
  g_trace.clear();
  Stack s{x};
  handle(name).call_boxed(&s);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].to_tensor().is_same(x));
  std::string out;
  for (const auto& t : g_trace) out += (out.empty() ? "" : ",") + t;
  return out;
}

TEST(DispatchMode, SeesEveryCallBelowAutograd) {
  ModeOps ops;
  Tensor x = on(DeviceType::CPU);
  EXPECT_EQ(run(ops.f, x), "autograd,cpu");
  auto mode = std::make_shared<RecordingMode>("m");
  {
    DispatchModeGuard guard(mode);
    EXPECT_TRUE(tls_is_dispatch_key_included(DK::Python));
    EXPECT_TRUE(tls_is_dispatch_key_included(DK::PythonTLSSnapshot));
    EXPECT_EQ(run(ops.f, x), "autograd,m:test_dispatch_modes::f,cpu");
    // Unboxed calls too.
    g_trace.clear();
    handle(ops.f).typed<Tensor(const Tensor&)>().call(x);
    EXPECT_THAT(g_trace, ElementsAre("autograd", "m:test_dispatch_modes::f", "cpu"));
  }
  ASSERT_EQ(mode->seen_keys.size(), 2u);
  EXPECT_TRUE(mode->seen_keys[0].has(DK::Python)) << mode->seen_keys[0].to_string();
  EXPECT_FALSE(mode->seen_keys[0].has(DK::AutogradCPU)) << mode->seen_keys[0].to_string();
  EXPECT_EQ(mode->stack_len_inside, 0u) << "the mode runs popped";
  EXPECT_EQ(dispatch_mode_stack_len(), 0u);
  EXPECT_FALSE(tls_is_dispatch_key_included(DK::Python));
  EXPECT_FALSE(tls_is_dispatch_key_included(DK::PythonTLSSnapshot));
  EXPECT_EQ(run(ops.f, x), "autograd,cpu") << "no mode: nothing intercepts";
}

TEST(DispatchMode, NestedModesRunTopFirstAndComeBack) {
  ModeOps ops;
  Tensor x = on(DeviceType::CPU);
  auto outer = std::make_shared<RecordingMode>("outer");
  auto inner = std::make_shared<RecordingMode>("inner");
  DispatchModeGuard g1(outer);
  DispatchModeGuard g2(inner);
  EXPECT_EQ(current_dispatch_mode(), inner);
  EXPECT_EQ(dispatch_mode_at(0), outer);
  EXPECT_EQ(dispatch_mode_stack_len(), 2u);
  EXPECT_EQ(run(ops.f, x),
            "autograd,inner:test_dispatch_modes::f,outer:test_dispatch_modes::f,cpu");
  EXPECT_EQ(inner->stack_len_inside, 1u);
  EXPECT_EQ(outer->stack_len_inside, 0u);
  EXPECT_EQ(current_dispatch_mode(), inner);
  EXPECT_EQ(dispatch_mode_stack_len(), 2u);
  EXPECT_THROW(dispatch_mode_at(2), IndexError);
}

TEST(DispatchMode, AModeThatPopsTheNextOneSkipsIt) {
  ModeOps ops;
  Tensor x = on(DeviceType::CPU);
  auto outer = std::make_shared<RecordingMode>("outer");
  auto inner = std::make_shared<RecordingMode>("inner");
  std::shared_ptr<DispatchMode> popped;
  inner->before_call = [&] { popped = pop_dispatch_mode(); };
  DispatchModeGuard g1(outer);
  DispatchModeGuard g2(inner);
  EXPECT_EQ(run(ops.f, x), "autograd,inner:test_dispatch_modes::f,cpu");
  EXPECT_EQ(popped, outer);
  EXPECT_EQ(dispatch_mode_stack_len(), 1u) << "the fallback pushed the inner mode back alone";
  EXPECT_EQ(current_dispatch_mode(), inner);
  // Put the stack back as the guards expect it.
  EXPECT_EQ(pop_dispatch_mode(), inner);
  push_dispatch_mode(outer);
  push_dispatch_mode(inner);
}

struct ThrowingMode : DispatchMode {
  void dispatch(const OperatorHandle&, DispatchKeySet, Stack*) override {
    EXPECT_EQ(dispatch_mode_stack_len(), 1u);
    throw std::runtime_error("mode failed");
  }
};

TEST(DispatchMode, AnExceptionInAModeLeavesTheStackAsItWas) {
  ModeOps ops;
  Tensor x = on(DeviceType::CPU);
  auto outer = std::make_shared<RecordingMode>("outer");
  auto thrower = std::make_shared<ThrowingMode>();
  {
    DispatchModeGuard g1(outer);
    DispatchModeGuard g2(thrower);
    Stack s{x};
    EXPECT_THROW(handle(ops.f).call_boxed(&s), std::runtime_error);
    EXPECT_EQ(dispatch_mode_stack_len(), 2u);
    EXPECT_EQ(current_dispatch_mode(), thrower);
    EXPECT_TRUE(tls_is_dispatch_key_included(DK::Python));
    EXPECT_FALSE(tls_is_dispatch_key_excluded(DK::AutogradCPU)) << "autograd's guard unwound";
  }
  EXPECT_EQ(dispatch_mode_stack_len(), 0u);
  EXPECT_FALSE(tls_is_dispatch_key_included(DK::Python));
  EXPECT_THROW(pop_dispatch_mode(), Error);
  EXPECT_EQ(current_dispatch_mode(), nullptr);
  EXPECT_THROW(push_dispatch_mode(nullptr), Error);
}

// A mode on this thread while three others dispatch: they never reach it, and it sees each of
// this thread's calls once.
TEST(DispatchMode, AModeOnOneThreadDoesNotAffectOthers) {
  const OperatorName g{"test_dispatch_modes_threads::g", ""};
  Reg d = def("test_dispatch_modes_threads::g(Tensor x) -> Tensor");
  std::atomic<int> cpu_calls{0};
  Reg cpu = impl(g, DK::CPU, [&](const Tensor& x) {
    cpu_calls.fetch_add(1, std::memory_order_relaxed);
    return x;
  });
  struct CountingMode : DispatchMode {
    std::atomic<int> calls{0};
    void dispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) override {
      calls.fetch_add(1, std::memory_order_relaxed);
      redispatch_below_python(op, keys, stack);
    }
  };
  auto mode = std::make_shared<CountingMode>();
  auto op = handle(g).typed<Tensor(const Tensor&)>();
  constexpr int kCalls = 2000;
  std::atomic<int> saw_mode{0};
  std::atomic<bool> start{false};
  std::vector<std::thread> threads;
  DispatchModeGuard guard(mode);
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      while (!start.load()) std::this_thread::yield();
      float buf[2] = {};
      Tensor x = from_blob(buf, {2}, kFloat, Device(DeviceType::CPU));
      if (dispatch_mode_stack_len() != 0 || tls_is_dispatch_key_included(DK::Python)) {
        saw_mode.fetch_add(1);
      }
      for (int i = 0; i < kCalls; ++i) op.call(x);
    });
  }
  start.store(true);
  Tensor x = on(DeviceType::CPU);
  for (int i = 0; i < kCalls; ++i) op.call(x);
  for (auto& th : threads) th.join();
  EXPECT_EQ(saw_mode.load(), 0);
  EXPECT_EQ(mode->calls.load(), kCalls);
  EXPECT_EQ(cpu_calls.load(), 4 * kCalls);
}

// Without a mode, a call on a tensor that carries the Python keys (a tensor subclass) reaches
// the subclass handler, one at a time; without one it goes on below.
TEST(DispatchMode, ThePythonKeyReachesTheSubclassHandlerWithoutAMode) {
  ModeOps ops;
  Tensor x = on(DeviceType::CPU);
  x.unsafe_get_impl()->unsafe_set_key_set(x.key_set() | kPythonKeySet);
  EXPECT_EQ(run(ops.f, x), "autograd,cpu") << "no handler: below the Python key";
  std::vector<DispatchKeySet> handled;
  RegistrationHandle h =
      set_python_subclass_handler([&](const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
        g_trace.push_back("handler:" + op.operator_name().to_string());
        handled.push_back(keys);
        redispatch_below_python(op, keys, stack);
      });
  EXPECT_THROW((void)set_python_subclass_handler([](auto&&...) {}), Error);
  EXPECT_EQ(run(ops.f, x), "autograd,handler:test_dispatch_modes::f,cpu");
  ASSERT_EQ(handled.size(), 1u);
  EXPECT_TRUE(handled[0].has(DK::Python));
  // A mode comes first.
  {
    DispatchModeGuard guard(std::make_shared<RecordingMode>("m"));
    EXPECT_EQ(run(ops.f, x),
              "autograd,m:test_dispatch_modes::f,handler:test_dispatch_modes::f,cpu");
  }
  h.reset();
  EXPECT_EQ(run(ops.f, x), "autograd,cpu");
  RegistrationHandle again = set_python_subclass_handler([](auto&&...) {});
}

// Keys an IncludeDispatchKeyGuard included before the first mode stay when the last one goes.
TEST(DispatchMode, ThePythonKeysIncludedBeforeTheFirstModeStay) {
  IncludeDispatchKeyGuard python(DK::Python);
  {
    DispatchModeGuard guard(std::make_shared<RecordingMode>("m"));
    EXPECT_TRUE(tls_is_dispatch_key_included(DK::PythonTLSSnapshot));
  }
  EXPECT_TRUE(tls_is_dispatch_key_included(DK::Python));
  EXPECT_FALSE(tls_is_dispatch_key_included(DK::PythonTLSSnapshot));
}

TEST(DispatchMode, TheCoreRegistersThePythonKeys) {
  EXPECT_EQ(test_util::dispatcher().fallback_debug(DK::Python), "registered in opdispatch core");
  EXPECT_EQ(test_util::dispatcher().fallback_debug(DK::PythonTLSSnapshot),
            "registered in opdispatch core");
}

}  // namespace
}  // namespace opd
