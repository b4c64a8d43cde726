// The dispatch observer: every call path reports its hops (operator, key set, chosen key, kernel
// site, nesting) while an observer is installed, and nothing once it is gone.

#include "opd/dispatch_observer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using DK = DispatchKey;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

struct Recorded {
  std::string op;
  DispatchKeySet keys;
  DispatchKey key;
  DispatchEntry entry;
  int depth;
  KernelOrigin origin;
};

class Recorder : public DispatchObserver {
 public:
  void on_enter(const DispatchHop& hop) override {
    std::lock_guard lock(mutex);
    enters.push_back({hop.op.operator_name().to_string(), hop.keys, hop.key, hop.entry, hop.depth,
                      kernel_origin(hop)});
    log.push_back(fmt::format("enter {} {} {}", hop.op.operator_name().to_string(),
                              to_string(hop.entry), to_string(hop.key)));
  }
  void on_exit(const DispatchHop& hop, bool threw) override {
    std::lock_guard lock(mutex);
    log.push_back(fmt::format("exit {} {}{}", hop.op.operator_name().to_string(),
                              to_string(hop.key), threw ? " threw" : ""));
  }
  std::mutex mutex;
  std::vector<Recorded> enters;
  std::vector<std::string> log;
};

float g_buf[2] = {1, 2};
Tensor cpu_tensor() { return from_blob(g_buf, {2}, kFloat); }

OperatorHandle handle(const char* name) {
  return Dispatcher::singleton().find_schema_or_throw(name, "");
}

std::optional<TypedOperatorHandle<Tensor(const Tensor&)>> g_op;

Tensor identity(const Tensor& x) { return x; }
Tensor autograd_redispatching(DispatchKeySet ks, const Tensor& x) {
  return g_op->redispatch(ks - kAutogradKeySet, x);
}
void autograd_boxed(const OperatorHandle& op, DispatchKeySet ks, Stack* s) {
  op.redispatch_boxed(ks - kAutogradKeySet, s);
}
Tensor throwing(const Tensor&) { throw ValueError("test_observer: boom"); }

// The site Library writes for a registration on `line` of this file.
std::string site(int line) {
  return fmt::format("registered at tests/core/dispatch/dispatch_observer_test.cpp:{}", line);
}

TEST(DispatchObserver, UnboxedCallReportsOperatorKeysKernelSiteAndSource) {
  Library def(Library::DEF, "test_observer_call");
  def.def("f(Tensor x) -> Tensor");
  Library cpu(Library::IMPL, "test_observer_call", DK::CPU);
  const int line = __LINE__ + 1;
  cpu.impl("f", &identity);
  auto op = handle("test_observer_call::f").typed<Tensor(const Tensor&)>();

  auto recorder = std::make_shared<Recorder>();
  {
    auto guard = set_dispatch_observer(recorder);
    op.call(cpu_tensor());
  }
  ASSERT_EQ(recorder->enters.size(), 1u);
  const Recorded& r = recorder->enters[0];
  EXPECT_EQ(r.op, "test_observer_call::f");
  EXPECT_EQ(r.key, DK::CPU);
  EXPECT_TRUE(r.keys.has(DK::CPU)) << r.keys.to_string();
  EXPECT_EQ(r.entry, DispatchEntry::Call);
  EXPECT_EQ(r.depth, 0);
  EXPECT_EQ(r.origin.debug, site(line));
  EXPECT_EQ(r.origin.source, "kernel");
  EXPECT_EQ(r.origin.plugin, "");
  EXPECT_THAT(recorder->log, ElementsAre("enter test_observer_call::f call CPU",
                                         "exit test_observer_call::f CPU"));
}

TEST(DispatchObserver, NothingIsRecordedOnceTheGuardIsGone) {
  Library def(Library::DEF, "test_observer_off");
  def.def("f(Tensor x) -> Tensor");
  Library cpu(Library::IMPL, "test_observer_off", DK::CPU);
  cpu.impl("f", &identity);
  OperatorHandle h = handle("test_observer_off::f");
  auto op = h.typed<Tensor(const Tensor&)>();

  auto recorder = std::make_shared<Recorder>();
  EXPECT_FALSE(detail::dispatch_observed());
  { auto guard = set_dispatch_observer(recorder); }
  EXPECT_FALSE(detail::dispatch_observed());
  op.call(cpu_tensor());
  Stack stack{IValue(cpu_tensor())};
  h.call_boxed(&stack);
  EXPECT_THAT(recorder->enters, IsEmpty());
  EXPECT_THAT(recorder->log, IsEmpty());
}

TEST(DispatchObserver, AutogradRedispatchIsNestedUnderTheCall) {
  Library def(Library::DEF, "test_observer_redispatch");
  def.def("f(Tensor x) -> Tensor");
  Library cpu(Library::IMPL, "test_observer_redispatch", DK::CPU);
  cpu.impl("f", &identity);
  Library ag(Library::IMPL, "test_observer_redispatch", DK::Autograd);
  const int ag_line = __LINE__ + 1;
  ag.impl("f", &autograd_redispatching);
  g_op.emplace(handle("test_observer_redispatch::f").typed<Tensor(const Tensor&)>());

  auto recorder = std::make_shared<Recorder>();
  {
    auto guard = set_dispatch_observer(recorder);
    g_op->call(cpu_tensor());
  }
  g_op.reset();
  EXPECT_THAT(recorder->log, ElementsAre("enter test_observer_redispatch::f call AutogradCPU",
                                         "enter test_observer_redispatch::f redispatch CPU",
                                         "exit test_observer_redispatch::f CPU",
                                         "exit test_observer_redispatch::f AutogradCPU"));
  ASSERT_EQ(recorder->enters.size(), 2u);
  EXPECT_EQ(recorder->enters[0].depth, 0);
  EXPECT_EQ(recorder->enters[0].origin.debug, site(ag_line));
  EXPECT_EQ(recorder->enters[0].origin.source, "autograd kernel");
  EXPECT_EQ(recorder->enters[1].depth, 1);
  EXPECT_FALSE(recorder->enters[1].keys.has(DK::AutogradCPU));
  EXPECT_EQ(recorder->enters[1].origin.source, "kernel");
}

TEST(DispatchObserver, BoxedCallAndBoxedRedispatch) {
  Library def(Library::DEF, "test_observer_boxed");
  def.def("f(Tensor x) -> Tensor");
  Library cpu(Library::IMPL, "test_observer_boxed", DK::CPU);
  cpu.impl("f", &identity);
  Library ag(Library::IMPL, "test_observer_boxed", DK::AutogradCPU);
  ag.impl("f", &autograd_boxed);
  OperatorHandle h = handle("test_observer_boxed::f");

  auto recorder = std::make_shared<Recorder>();
  {
    auto guard = set_dispatch_observer(recorder);
    Stack stack{IValue(cpu_tensor())};
    h.call_boxed(&stack);
    ASSERT_EQ(stack.size(), 1u);
  }
  EXPECT_THAT(recorder->log, ElementsAre("enter test_observer_boxed::f call_boxed AutogradCPU",
                                         "enter test_observer_boxed::f redispatch_boxed CPU",
                                         "exit test_observer_boxed::f CPU",
                                         "exit test_observer_boxed::f AutogradCPU"));
  ASSERT_EQ(recorder->enters.size(), 2u);
  EXPECT_EQ(recorder->enters[0].depth, 0);
  EXPECT_EQ(recorder->enters[1].depth, 1);
}

TEST(DispatchObserver, ExitReportsAThrowingKernelAndDepthRecovers) {
  Library def(Library::DEF, "test_observer_throw");
  def.def("f(Tensor x) -> Tensor");
  def.def("g(Tensor x) -> Tensor");
  Library cpu(Library::IMPL, "test_observer_throw", DK::CPU);
  cpu.impl("f", &throwing);
  cpu.impl("g", &identity);
  auto f = handle("test_observer_throw::f").typed<Tensor(const Tensor&)>();
  auto g = handle("test_observer_throw::g").typed<Tensor(const Tensor&)>();

  auto recorder = std::make_shared<Recorder>();
  {
    auto guard = set_dispatch_observer(recorder);
    EXPECT_THROW(f.call(cpu_tensor()), ValueError);
    g.call(cpu_tensor());
  }
  EXPECT_THAT(
      recorder->log,
      ElementsAre("enter test_observer_throw::f call CPU", "exit test_observer_throw::f CPU threw",
                  "enter test_observer_throw::g call CPU", "exit test_observer_throw::g CPU"));
  ASSERT_EQ(recorder->enters.size(), 2u);
  EXPECT_EQ(recorder->enters[1].depth, 0);
}

TEST(DispatchObserver, MissingKernelIsReportedBeforeTheError) {
  Library def(Library::DEF, "test_observer_missing");
  def.def("f(Tensor x) -> Tensor");
  auto op = handle("test_observer_missing::f").typed<Tensor(const Tensor&)>();

  auto recorder = std::make_shared<Recorder>();
  {
    auto guard = set_dispatch_observer(recorder);
    EXPECT_THROW(op.call(cpu_tensor()), NotImplementedError);
  }
  ASSERT_EQ(recorder->enters.size(), 1u);
  EXPECT_EQ(recorder->enters[0].key, DK::CPU);
  EXPECT_EQ(recorder->enters[0].origin.debug, "missing");
  EXPECT_EQ(recorder->enters[0].origin.source, "missing");
  EXPECT_THAT(recorder->log.back(), EndsWith("threw"));
}

TEST(DispatchObserver, GuardsNestAndRestoreThePreviousObserver) {
  Library def(Library::DEF, "test_observer_nest");
  def.def("f(Tensor x) -> Tensor");
  Library cpu(Library::IMPL, "test_observer_nest", DK::CPU);
  cpu.impl("f", &identity);
  auto op = handle("test_observer_nest::f").typed<Tensor(const Tensor&)>();

  auto outer = std::make_shared<Recorder>();
  auto inner = std::make_shared<Recorder>();
  {
    auto g1 = set_dispatch_observer(outer);
    {
      auto g2 = set_dispatch_observer(inner);
      op.call(cpu_tensor());
    }
    op.call(cpu_tensor());
    op.call(cpu_tensor());
    {
      auto none = set_dispatch_observer(nullptr);
      EXPECT_FALSE(detail::dispatch_observed());
      op.call(cpu_tensor());
    }
    EXPECT_TRUE(detail::dispatch_observed());
  }
  EXPECT_FALSE(detail::dispatch_observed());
  EXPECT_EQ(inner->enters.size(), 1u);
  EXPECT_EQ(outer->enters.size(), 2u);
}

TEST(DispatchObserver, MathKernelServesAndItsCallsNest) {
  Library def(Library::DEF, "test_observer_math");
  def.def("inner(Tensor x) -> Tensor");
  def.def("outer(Tensor x) -> Tensor");
  Library cpu(Library::IMPL, "test_observer_math", DK::CPU);
  cpu.impl("inner", &identity);
  Library math(Library::IMPL, "test_observer_math", DK::CompositeImplicitAutograd);
  math.impl("outer", [](const Tensor& x) {
    return handle("test_observer_math::inner").typed<Tensor(const Tensor&)>().call(x);
  });
  auto op = handle("test_observer_math::outer").typed<Tensor(const Tensor&)>();

  auto recorder = std::make_shared<Recorder>();
  {
    auto guard = set_dispatch_observer(recorder);
    op.call(cpu_tensor());
  }
  ASSERT_EQ(recorder->enters.size(), 2u);
  EXPECT_EQ(recorder->enters[0].origin.source, "math kernel");
  EXPECT_EQ(recorder->enters[0].key, DK::AutogradCPU) << "CompositeImplicitAutograd serves it";
  EXPECT_EQ(recorder->enters[1].op, "test_observer_math::inner");
  EXPECT_EQ(recorder->enters[1].depth, 1);
}

TEST(DispatchObserver, PluginOfDebugReadsTheRegistrationContextSuffix) {
  EXPECT_EQ(plugin_of_debug("registered at plugins/cpu/add.cpp:12 (plugin cpu 0.1.0)"),
            "cpu 0.1.0");
  EXPECT_EQ(plugin_of_debug("registered at tests/x.cpp:3"), "");
  EXPECT_EQ(plugin_of_debug("registered at x (y)"), "");
  EXPECT_EQ(plugin_of_debug(""), "");
}

TEST(DispatchObserver, EntryNames) {
  EXPECT_STREQ(to_string(DispatchEntry::Call), "call");
  EXPECT_STREQ(to_string(DispatchEntry::Redispatch), "redispatch");
  EXPECT_STREQ(to_string(DispatchEntry::CallBoxed), "call_boxed");
  EXPECT_STREQ(to_string(DispatchEntry::RedispatchBoxed), "redispatch_boxed");
}

}  // namespace
}  // namespace opd
