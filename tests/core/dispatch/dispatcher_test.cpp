// The Dispatcher and OperatorEntry: registration (def, impl, fallback, listeners), the kernel
// stack per key, the computed table and its precedence (Note [Kernel precedence] in
// operator_entry.cpp), fallthrough, the error messages that are part of the contract, dumps and
// invariants, redispatch, and reclamation. How the thread-local key sets steer a call is tested in
// local_dispatch_key_set_test.cpp.
//
// The dispatcher is process-wide: every test uses its own namespace and leaves nothing behind.

#include "opd/dispatcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <source_location>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/dispatch/dispatch_helpers.h"
#include "error_text.h"
#include "opd/error.h"
#include "opd/kernel_function.h"
#include "opd/library.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using DK = DispatchKey;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

using test_util::at;
using test_util::call;
using test_util::call_boxed;
using test_util::def;
using test_util::dispatcher;
using test_util::g_trace;
using test_util::handle;
using test_util::impl;
using test_util::on;
using test_util::Reg;
using test_util::tagged;

// ---- Helpers (the shared ones are in dispatch_helpers.h) ---------------------------------------

Reg fallback(DispatchKey key, KernelFunction kernel,
             std::source_location loc = std::source_location::current()) {
  return {dispatcher().register_fallback(key, std::move(kernel), at(loc)), at(loc)};
}

// A boxed fallback for `(Tensor x) -> Tensor` operators: leaves x on the stack as the result.
void recording_fallback(const OperatorHandle& op, Stack*) {
  g_trace.push_back("fallback:" + op.operator_name().to_string());
}

std::string table(const OperatorName& name) { return handle(name).dump_computed_table(); }
std::string state(const OperatorName& name) {
  auto h = dispatcher().find_op(name);
  return h ? h->dump_state() : "";
}

// The row of a computed table for `key` ("CPU: ... [kernel]"); "" when the key has no entry.
std::string row(const std::string& table, std::string_view key) {
  std::istringstream in(table);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(std::string(key) + ": ", 0) == 0) return line;
  }
  return "";
}

const std::string kCoreFallthrough = "fallthrough registered in opdispatch core [backend fallback]";

// Operator names of namespace `ns` among `names`.
template <class Names>
std::vector<std::string> in_namespace(const Names& names, std::string_view ns) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    std::string s;
    if constexpr (std::is_same_v<std::decay_t<decltype(n)>, OperatorName>) {
      s = n.to_string();
    } else {
      s = n;
    }
    if (s.rfind(std::string(ns) + "::", 0) == 0) out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- def / impl / counts / lifetime -------------------------------------------------------

TEST(Dispatcher, RegisterDefThroughDispatcherApi) {
  const OperatorName foo{"test_dispatcher_def::foo", ""};
  {
    Reg d = def("test_dispatcher_def::foo(Tensor x) -> Tensor");
    auto h = dispatcher().find_schema(foo);
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->schema().to_string(), "test_dispatcher_def::foo(Tensor x) -> Tensor");
    EXPECT_EQ(h->debug(), d.site);
    EXPECT_THAT(d.site, StartsWith("registered at tests/core/dispatch/dispatcher_test.cpp:"));
    EXPECT_EQ(h->entry().def_count(), 1);
    EXPECT_EQ(h->entry().def_and_impl_count(), 1);
    EXPECT_THAT(in_namespace(dispatcher().all_op_names(), "test_dispatcher_def"),
                ElementsAre("test_dispatcher_def::foo"));
  }
  EXPECT_FALSE(dispatcher().find_op(foo).has_value());
  EXPECT_FALSE(dispatcher().find_schema(foo).has_value());
}

TEST(Dispatcher, RegisterImplThroughDispatcherApi) {
  const OperatorName foo{"test_dispatcher_impl::foo", ""};
  Reg d = def("test_dispatcher_impl::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  OperatorHandle h = handle(foo);
  EXPECT_TRUE(h.has_kernel_for_dispatch_key(DK::CPU));
  EXPECT_FALSE(h.has_kernel_for_dispatch_key(DK::CUDA));
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  EXPECT_EQ(call_boxed(foo, on(DeviceType::CPU)), "cpu");
  EXPECT_EQ(h.entry().def_and_impl_count(), 2);
}

TEST(Dispatcher, ImplWithoutKeyRegistersToCompositeImplicitAutograd) {
  const OperatorName foo{"test_dispatcher_nokey::foo", ""};
  Reg d = def("test_dispatcher_nokey::foo(Tensor x) -> Tensor");
  Reg any = impl(foo, std::nullopt, tagged("any"));
  EXPECT_TRUE(handle(foo).has_kernel_for_dispatch_key(DK::CompositeImplicitAutograd));
  EXPECT_THAT(state(foo), HasSubstr("CompositeImplicitAutograd[alias]: " + any.site));
  EXPECT_EQ(call(foo, on(DeviceType::CUDA)), "any");
}

TEST(Dispatcher, RegisterImplRejectsUndefinedKeyAndEmptyKernel) {
  const OperatorName foo{"test_dispatcher_badimpl::foo", ""};
  try {
    (void)dispatcher().register_impl(foo, DK::Undefined, CppFunction(tagged("x")).kernel(),
                                     std::nullopt, nullptr, "here");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("test_dispatcher_badimpl::foo: cannot register a kernel to "
                                   "dispatch key Undefined"));
  }
  try {
    (void)dispatcher().register_impl(foo, DK::CPU, KernelFunction(), std::nullopt, nullptr,
                                     "registered at nowhere:1");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("the kernel registered at registered at nowhere:1 is empty"));
  }
  EXPECT_FALSE(dispatcher().find_op(foo).has_value());
}

TEST(Dispatcher, DefAndImplCountsFollowRegistrations) {
  const OperatorName foo{"test_dispatcher_counts::foo", ""};
  Reg d = def("test_dispatcher_counts::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  Reg b = impl(foo, DK::CUDA, tagged("b"));
  Reg c = impl(foo, DK::CPU, tagged("c"));
  OperatorEntry& e = handle(foo).entry();
  EXPECT_EQ(e.def_count(), 1);
  EXPECT_EQ(e.def_and_impl_count(), 4);
  b.handle.reset();
  EXPECT_EQ(e.def_and_impl_count(), 3);
  d.handle.reset();
  EXPECT_EQ(e.def_count(), 0);
  EXPECT_EQ(e.def_and_impl_count(), 2);
  EXPECT_FALSE(e.has_schema());
  dispatcher().check_invariants();
}

TEST(Dispatcher, EntryIsErasedWhenTheLastRegistrationGoes) {
  const OperatorName foo{"test_dispatcher_erase::foo", ""};
  Reg d = def("test_dispatcher_erase::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  d.handle.reset();
  // The impl keeps the entry, now without a schema.
  ASSERT_TRUE(dispatcher().find_op(foo).has_value());
  EXPECT_FALSE(dispatcher().find_schema(foo).has_value());
  EXPECT_EQ(state(foo), "name: test_dispatcher_erase::foo\nschema: (none)\nCPU: " + cpu.site +
                            " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n");
  cpu.handle.reset();
  EXPECT_FALSE(dispatcher().find_op(foo).has_value());
  EXPECT_THAT(in_namespace(dispatcher().all_op_names(), "test_dispatcher_erase"), IsEmpty());
}

TEST(Dispatcher, ImplBeforeDefIsAllowedAndReportedAsDangling) {
  const OperatorName foo{"test_dispatcher_dangling::foo", ""};
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  EXPECT_THAT(in_namespace(dispatcher().find_dangling_impls(), "test_dispatcher_dangling"),
              ElementsAre("test_dispatcher_dangling::foo"));
  EXPECT_FALSE(dispatcher().find_schema(foo).has_value());
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  EXPECT_EQ(call_boxed(foo, on(DeviceType::CPU)), "cpu");
  {
    Reg d = def("test_dispatcher_dangling::foo(Tensor x) -> Tensor");
    EXPECT_THAT(in_namespace(dispatcher().find_dangling_impls(), "test_dispatcher_dangling"),
                IsEmpty());
    EXPECT_TRUE(dispatcher().find_schema(foo).has_value());
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  }
  EXPECT_THAT(in_namespace(dispatcher().find_dangling_impls(), "test_dispatcher_dangling"),
              ElementsAre("test_dispatcher_dangling::foo"));
}

TEST(Dispatcher, OverloadsAreSeparateOperators) {
  const OperatorName foo{"test_dispatcher_overload::foo", ""};
  const OperatorName foo_out{"test_dispatcher_overload::foo", "out"};
  Reg d1 = def("test_dispatcher_overload::foo(Tensor x) -> Tensor");
  Reg d2 = def("test_dispatcher_overload::foo.out(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("plain"));
  Reg b = impl(foo_out, DK::CPU, tagged("out"));
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "plain");
  EXPECT_EQ(call(foo_out, on(DeviceType::CPU)), "out");
  EXPECT_EQ(
      dispatcher().find_schema_or_throw("test_dispatcher_overload::foo", "out").operator_name(),
      foo_out);
}

TEST(Dispatcher, FindSchemaOrThrowNamesTheMissingOperator) {
  try {
    dispatcher().find_schema_or_throw("test_dispatcher_find::nope", "ov");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), "Could not find schema for test_dispatcher_find::nope.ov");
  }
  try {
    dispatcher().find_schema_or_throw("test_dispatcher_find::nope", "");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), "Could not find schema for test_dispatcher_find::nope");
  }
}

TEST(Dispatcher, FindSchemaOrThrowHintsAtAMissingDefWhenAnImplExists) {
  const OperatorName foo{"test_dispatcher_find_impl::foo", ""};
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  try {
    dispatcher().find_schema_or_throw("test_dispatcher_find_impl::foo", "");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Could not find schema for test_dispatcher_find_impl::foo but we found an "
              "implementation; did you forget to def() the operator?");
  }
  Reg d = def("test_dispatcher_find_impl::foo(Tensor x) -> Tensor");
  EXPECT_TRUE(dispatcher().find_schema_or_throw("test_dispatcher_find_impl::foo", "").has_schema());
}

TEST(Dispatcher, LibraryRegistrationsGoThroughTheDispatcher) {
  const OperatorName foo{"test_dispatcher_lib::foo", ""};
  auto lib = std::make_unique<Library>(Library::FRAGMENT, "test_dispatcher_lib");
  lib->def("foo(Tensor x) -> Tensor");
  lib->impl("foo", DK::CPU, tagged("cpu"));
  lib->impl("foo", DK::CompositeExplicitAutograd, tagged("cea"));
  auto fb = std::make_unique<Library>(Library::IMPL, "_", DK::Tracer);
  fb->fallback(CppFunction(&recording_fallback));
  OperatorEntry& e = handle(foo).entry();
  EXPECT_EQ(e.def_count(), 1);
  EXPECT_EQ(e.def_and_impl_count(), 3);
  EXPECT_THAT(row(table(foo), "Tracer"), HasSubstr("[backend fallback]"));
  EXPECT_TRUE(dispatcher().fallback_debug(DK::Tracer).has_value());
  EXPECT_EQ(call(foo, on(DeviceType::CUDA)), "cea");
  fb.reset();
  EXPECT_FALSE(dispatcher().fallback_debug(DK::Tracer).has_value());
  EXPECT_EQ(row(table(foo), "Tracer"), "");
  lib.reset();
  EXPECT_FALSE(dispatcher().find_op(foo).has_value());
}

// ---- Registration listeners ------------------------------------------------------------------

class RecordingListener : public OpRegistrationListener {
 public:
  RecordingListener(std::vector<std::string>* log, std::string ns)
      : log_(log), prefix_(std::move(ns) + "::") {}
  void on_operator_registered(const OperatorHandle& op) override {
    if (mine(op)) log_->push_back("+" + op.operator_name().to_string());
  }
  void on_operator_deregistered(const OperatorHandle& op) override {
    if (mine(op)) {
      log_->push_back("-" + op.operator_name().to_string() +
                      (op.has_schema() ? " " + op.schema().to_string() : " (no schema)"));
    }
  }

 private:
  bool mine(const OperatorHandle& op) const {
    return op.operator_name().name.rfind(prefix_, 0) == 0;
  }
  std::vector<std::string>* log_;
  std::string prefix_;
};

TEST(Dispatcher, ListenersSeeDefsReplayedOnAddAndDeregistrationsBeforeSchemaRemoval) {
  const OperatorName b{"test_dispatcher_listen::b", ""};
  std::vector<std::string> log;
  Reg da = def("test_dispatcher_listen::a(Tensor x) -> Tensor");
  RegistrationHandle listener = dispatcher().add_registration_listener(
      std::make_unique<RecordingListener>(&log, "test_dispatcher_listen"));
  EXPECT_THAT(log, ElementsAre("+test_dispatcher_listen::a")) << "replayed when added";

  Reg ib = impl(b, DK::CPU, tagged("b"));
  EXPECT_EQ(log.size(), 1u) << "an impl is not a def";
  Reg db = def("test_dispatcher_listen::b(Tensor x) -> Tensor");
  da.handle.reset();
  EXPECT_THAT(log, ElementsAre("+test_dispatcher_listen::a", "+test_dispatcher_listen::b",
                               "-test_dispatcher_listen::a test_dispatcher_listen::a(Tensor x) -> "
                               "Tensor"));
  listener.reset();
  db.handle.reset();
  Reg dc = def("test_dispatcher_listen::c(Tensor x) -> Tensor");
  EXPECT_EQ(log.size(), 3u) << "a removed listener hears nothing";
}

TEST(Dispatcher, ListenerReplayIgnoresImplOnlyOperators) {
  const OperatorName foo{"test_dispatcher_listen2::foo", ""};
  std::vector<std::string> log;
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  RegistrationHandle listener = dispatcher().add_registration_listener(
      std::make_unique<RecordingListener>(&log, "test_dispatcher_listen2"));
  EXPECT_THAT(log, IsEmpty());
}

// A listener that looks the operator up, dumps it and calls another operator from its callback
// (a deadlock when listeners held a non-re-entrant registration mutex).
class LookingUpListener : public OpRegistrationListener {
 public:
  explicit LookingUpListener(std::vector<std::string>* log) : log_(log) {}
  void on_operator_registered(const OperatorHandle& op) override {
    if (op.operator_name().name != "test_dispatcher_listen3::a") return;
    auto found = dispatcher().find_schema(op.operator_name());
    log_->push_back(found ? "found " + found->schema().to_string() : "not found");
    bool dumped = op.dump_state().find("schema: test_dispatcher_listen3::a") != std::string::npos;
    log_->push_back(dumped ? "dumped" : "no dump");
  }
  void on_operator_deregistered(const OperatorHandle& op) override {
    if (op.operator_name().name != "test_dispatcher_listen3::a") return;
    log_->push_back(dispatcher().find_schema(op.operator_name()) ? "still there" : "gone");
  }

 private:
  std::vector<std::string>* log_;
};

TEST(Dispatcher, ListenersMayLookOperatorsUp) {
  std::vector<std::string> log;
  RegistrationHandle listener =
      dispatcher().add_registration_listener(std::make_unique<LookingUpListener>(&log));
  { Reg d = def("test_dispatcher_listen3::a(Tensor x) -> Tensor"); }
  EXPECT_THAT(log, ElementsAre("found test_dispatcher_listen3::a(Tensor x) -> Tensor", "dumped",
                               "still there"));
}

// Throws from on_operator_registered (or, with `on_deregistration`, from
// on_operator_deregistered) for one operator name.
class RefusingListener : public OpRegistrationListener {
 public:
  explicit RefusingListener(std::string refuse, bool on_deregistration = false)
      : refuse_(std::move(refuse)), on_deregistration_(on_deregistration) {}
  void on_operator_registered(const OperatorHandle& op) override {
    if (!on_deregistration_ && op.operator_name().name == refuse_)
      throw std::runtime_error("not in this process");
  }
  void on_operator_deregistered(const OperatorHandle& op) override {
    if (on_deregistration_ && op.operator_name().name == refuse_)
      throw std::runtime_error("ignored");
  }

 private:
  std::string refuse_;
  bool on_deregistration_;
};

TEST(Dispatcher, AListenerThatThrowsRefusesTheDefAndLeavesNoTrace) {
  const OperatorName a{"test_dispatcher_listen4::a", ""};
  std::vector<std::string> log;
  RegistrationHandle recorder = dispatcher().add_registration_listener(
      std::make_unique<RecordingListener>(&log, "test_dispatcher_listen4"));
  {
    RegistrationHandle refuser = dispatcher().add_registration_listener(
        std::make_unique<RefusingListener>("test_dispatcher_listen4::a"));
    try {
      Reg d = def("test_dispatcher_listen4::a(Tensor x) -> Tensor");
      FAIL() << "the def was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.msg(),
                "test_dispatcher_listen4::a: the def was refused by a registration listener: not "
                "in this process");
    }
    EXPECT_FALSE(dispatcher().find_op(a).has_value()) << "a refused def leaves no operator";
    EXPECT_THAT(log, ElementsAre("+test_dispatcher_listen4::a",
                                 "-test_dispatcher_listen4::a test_dispatcher_listen4::a(Tensor "
                                 "x) -> Tensor"))
        << "the listener told first hears the def undone";
    dispatcher().check_invariants();
  }
  log.clear();
  // Without the refusing listener the operator can be defined, and undefined, again.
  {
    Reg d = def("test_dispatcher_listen4::a(Tensor x) -> Tensor");
    EXPECT_TRUE(dispatcher().find_schema(a).has_value());
  }
  EXPECT_EQ(log.size(), 2u);
  EXPECT_FALSE(dispatcher().find_op(a).has_value());
}

TEST(Dispatcher, AListenerThatThrowsOnDeregistrationDoesNotStopIt) {
  const OperatorName a{"test_dispatcher_listen5::a", ""};
  Reg d = def("test_dispatcher_listen5::a(Tensor x) -> Tensor");
  RegistrationHandle refuser = dispatcher().add_registration_listener(
      std::make_unique<RefusingListener>("test_dispatcher_listen5::a", true));
  d.handle.reset();
  EXPECT_FALSE(dispatcher().find_op(a).has_value());
  dispatcher().check_invariants();
}

// Registers from its callback, which is refused.
class RegisteringListener : public OpRegistrationListener {
 public:
  void on_operator_registered(const OperatorHandle& op) override {
    if (op.operator_name().name != "test_dispatcher_listen6::a") return;
    (void)dispatcher().register_def(parse_schema("test_dispatcher_listen6::b(Tensor x) -> Tensor"),
                                    "");
  }
  void on_operator_deregistered(const OperatorHandle&) override {}
};

TEST(Dispatcher, ListenersCannotRegister) {
  RegistrationHandle listener =
      dispatcher().add_registration_listener(std::make_unique<RegisteringListener>());
  EXPECT_THAT([] { Reg d = def("test_dispatcher_listen6::a(Tensor x) -> Tensor"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "test_dispatcher_listen6::a: the def was refused by a registration listener: "
                  "test_dispatcher_listen6::b: cannot register from a registration listener")));
  EXPECT_FALSE(dispatcher().find_op({"test_dispatcher_listen6::a", ""}).has_value());
  EXPECT_FALSE(dispatcher().find_op({"test_dispatcher_listen6::b", ""}).has_value());
}

// ---- The kernel stack per key --------------------------------------------------------------

TEST(Dispatcher, NewestKernelForAKeyWins) {
  const OperatorName foo{"test_dispatcher_newest::foo", ""};
  Reg d = def("test_dispatcher_newest::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  Reg b = impl(foo, DK::CPU, tagged("b"));
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "b");
  EXPECT_EQ(call_boxed(foo, on(DeviceType::CPU)), "b");
  EXPECT_EQ(row(table(foo), "CPU"), "CPU: " + b.site + " [kernel]");
}

TEST(Dispatcher, OverrideThenDeregisterRestoresPrevious) {
  const OperatorName foo{"test_dispatcher_restore::foo", ""};
  Reg d = def("test_dispatcher_restore::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  std::string before = state(foo);
  {
    Reg b = impl(foo, DK::CPU, tagged("b"));
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "b");
  }
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "a");
  EXPECT_EQ(state(foo), before);
  dispatcher().check_invariants();
}

TEST(Dispatcher, DeregisteringTheOlderKernelFirstKeepsTheNewer) {
  const OperatorName foo{"test_dispatcher_older::foo", ""};
  Reg d = def("test_dispatcher_older::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  Reg b = impl(foo, DK::CPU, tagged("b"));
  Reg c = impl(foo, DK::CPU, tagged("c"));
  b.handle.reset();
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "c");
  a.handle.reset();
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "c");
  EXPECT_THAT(state(foo), Not(HasSubstr("(inactive)")));
  c.handle.reset();
  EXPECT_THROW(call(foo, on(DeviceType::CPU)), NotImplementedError);
}

TEST(Dispatcher, InactiveKernelsAreDumpedBelowTheActiveOne) {
  const OperatorName foo{"test_dispatcher_inactive::foo", ""};
  Reg d = def("test_dispatcher_inactive::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  Reg b = impl(foo, DK::CPU, tagged("b"));
  Reg c = impl(foo, DK::CPU, tagged("c"));
  EXPECT_THAT(
      state(foo),
      HasSubstr("CPU: " + c.site + " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n" +
                "CPU (inactive): " + b.site + " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n" +
                "CPU (inactive): " + a.site + " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n"));
}

// The override warning goes to the "opd" spdlog logger, which writes to stderr; capture stderr.
// Skipped when OPD_LOG_LEVEL hides warnings.
bool warnings_visible() {
  const char* level = std::getenv("OPD_LOG_LEVEL");
  if (!level) return true;
  std::string l(level);
  return l == "trace" || l == "debug" || l == "info" || l == "warn" || l == "warning";
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(Dispatcher, OverrideWarningIsLoggedOncePerOperatorAndKeyNamingBothSites) {
  if (!warnings_visible()) GTEST_SKIP() << "OPD_LOG_LEVEL hides warnings";
  const OperatorName foo{"test_dispatcher_warn::foo", ""};
  Reg d = def("test_dispatcher_warn::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));

  ::testing::internal::CaptureStderr();
  Reg b = impl(foo, DK::CPU, tagged("b"));
  Reg c = impl(foo, DK::CPU, tagged("c"));
  std::string first = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(first, "Overriding a previously registered kernel"), 1) << first;
  EXPECT_THAT(first, HasSubstr("Overriding a previously registered kernel for the same operator "
                               "and the same dispatch key\n  operator: "
                               "test_dispatcher_warn::foo(Tensor x) -> Tensor\n    " +
                               d.site + "\n  dispatch key: CPU\n  previous kernel: " + a.site +
                               "\n       new kernel: " + b.site));

  ::testing::internal::CaptureStderr();
  Reg x = impl(foo, DK::CUDA, tagged("x"));
  Reg y = impl(foo, DK::CUDA, tagged("y"));
  std::string second = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(second, "Overriding a previously registered kernel"), 1) << second;
  EXPECT_THAT(second, HasSubstr("dispatch key: CUDA\n  previous kernel: " + x.site +
                                "\n       new kernel: " + y.site));
}

TEST(Dispatcher, NoOverrideWarningForDistinctKeysOrOperators) {
  if (!warnings_visible()) GTEST_SKIP() << "OPD_LOG_LEVEL hides warnings";
  const OperatorName foo{"test_dispatcher_nowarn::foo", ""};
  const OperatorName bar{"test_dispatcher_nowarn::bar", ""};
  ::testing::internal::CaptureStderr();
  Reg a = impl(foo, DK::CPU, tagged("a"));
  Reg b = impl(foo, DK::CUDA, tagged("b"));
  Reg c = impl(bar, DK::CPU, tagged("c"));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, Not(HasSubstr("Overriding")));
}

// ---- Computed table precedence (Note [Kernel precedence]) ----------------------------------

TEST(DispatcherPrecedence, KernelForTheKeyBeatsEveryComposite) {
  const OperatorName foo{"test_dispatcher_prec1::foo", ""};
  Reg d = def("test_dispatcher_prec1::foo(Tensor x) -> Tensor");
  Reg cia = impl(foo, DK::CompositeImplicitAutograd, tagged("cia"));
  Reg cea = impl(foo, DK::CompositeExplicitAutograd, tagged("cea"));
  Reg ceanf = impl(foo, DK::CompositeExplicitAutogradNonFunctional, tagged("ceanf"));
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  std::string t = table(foo);
  EXPECT_EQ(row(t, "CPU"), "CPU: " + cpu.site + " [kernel]");
  EXPECT_EQ(row(t, "CUDA"), "CUDA: " + ceanf.site + " [default backend kernel]");
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  EXPECT_EQ(call(foo, on(DeviceType::CUDA)), "ceanf");
  EXPECT_EQ(call_boxed(foo, on(DeviceType::Meta)), "ceanf");
}

TEST(DispatcherPrecedence, NonFunctionalBeatsExplicitAutogradForBackendsAndUndefined) {
  const OperatorName foo{"test_dispatcher_prec2::foo", ""};
  Reg d = def("test_dispatcher_prec2::foo(Tensor x) -> Tensor");
  Reg cea = impl(foo, DK::CompositeExplicitAutograd, tagged("cea"));
  Reg ceanf = impl(foo, DK::CompositeExplicitAutogradNonFunctional, tagged("ceanf"));
  std::string t = table(foo);
  for (const char* k : {"Undefined", "CPU", "CUDA", "PrivateUse1", "Meta"}) {
    EXPECT_EQ(row(t, k), std::string(k) + ": " + ceanf.site + " [default backend kernel]");
  }
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "ceanf");
  ceanf.handle.reset();
  t = table(foo);
  for (const char* k : {"Undefined", "CPU", "CUDA", "PrivateUse1", "Meta"}) {
    EXPECT_EQ(row(t, k), std::string(k) + ": " + cea.site + " [default backend kernel]");
  }
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cea");
}

TEST(DispatcherPrecedence, ExplicitAutogradShadowsImplicitAutograd) {
  const OperatorName foo{"test_dispatcher_prec3::foo", ""};
  Reg d = def("test_dispatcher_prec3::foo(Tensor x) -> Tensor");
  Reg cia = impl(foo, DK::CompositeImplicitAutograd, tagged("cia"));
  Reg cea = impl(foo, DK::CompositeExplicitAutograd, tagged("cea"));
  std::string t = table(foo);
  EXPECT_EQ(row(t, "CPU"), "CPU: " + cea.site + " [default backend kernel]");
  EXPECT_EQ(row(t, "Undefined"), "Undefined: " + cea.site + " [default backend kernel]");
  // The autograd keys must reach the CEA kernel through their fallthrough, not the math kernel.
  EXPECT_EQ(row(t, "AutogradCPU"), "AutogradCPU: " + kCoreFallthrough);
  EXPECT_THAT(t, Not(HasSubstr("[math kernel]")));
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cea");
}

TEST(DispatcherPrecedence, ImplicitAutogradServesBackendsAutogradAndUndefinedWithoutBackendKernel) {
  const OperatorName foo{"test_dispatcher_prec4::foo", ""};
  Reg d = def("test_dispatcher_prec4::foo(Tensor x) -> Tensor");
  Reg cia = impl(foo, DK::CompositeImplicitAutograd, tagged("cia"));
  std::string t = table(foo);
  for (const char* k : {"Undefined", "CPU", "CUDA", "PrivateUse1", "Meta", "AutogradCPU",
                        "AutogradCUDA", "AutogradPrivateUse1", "AutogradMeta"}) {
    EXPECT_EQ(row(t, k), std::string(k) + ": " + cia.site + " [math kernel]");
  }
  EXPECT_EQ(row(t, "ADInplaceOrView"), "ADInplaceOrView: " + kCoreFallthrough);
  EXPECT_EQ(row(t, "Tracer"), "");
  // The math kernel serves the autograd key: it runs once, above the backend.
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cia");
  EXPECT_EQ(call_boxed(foo, on(DeviceType::CUDA)), "cia");
}

TEST(DispatcherPrecedence, ImplicitAutogradIsShadowedOnlyForTheBackendWithAKernel) {
  const OperatorName foo{"test_dispatcher_prec5::foo", ""};
  Reg d = def("test_dispatcher_prec5::foo(Tensor x) -> Tensor");
  Reg cia = impl(foo, DK::CompositeImplicitAutograd, tagged("cia"));
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  std::string t = table(foo);
  EXPECT_EQ(row(t, "CPU"), "CPU: " + cpu.site + " [kernel]");
  EXPECT_EQ(row(t, "AutogradCPU"), "AutogradCPU: " + kCoreFallthrough);
  EXPECT_EQ(row(t, "CUDA"), "CUDA: " + cia.site + " [math kernel]");
  EXPECT_EQ(row(t, "AutogradCUDA"), "AutogradCUDA: " + cia.site + " [math kernel]");
  EXPECT_EQ(row(t, "Undefined"), "Undefined: " + cia.site + " [math kernel]");
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  EXPECT_EQ(call(foo, on(DeviceType::CUDA)), "cia");
  cpu.handle.reset();
  EXPECT_EQ(row(table(foo), "AutogradCPU"), "AutogradCPU: " + cia.site + " [math kernel]");
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cia");
}

TEST(DispatcherPrecedence, AutogradAliasServesAutogradKeys) {
  const OperatorName foo{"test_dispatcher_prec6::foo", ""};
  Reg d = def("test_dispatcher_prec6::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg ag = impl(foo, DK::Autograd, tagged("autograd"));
  std::string t = table(foo);
  for (const char* k : {"AutogradCPU", "AutogradCUDA", "AutogradPrivateUse1", "AutogradMeta"}) {
    EXPECT_EQ(row(t, k), std::string(k) + ": " + ag.site + " [autograd kernel]");
  }
  EXPECT_EQ(row(t, "CPU"), "CPU: " + cpu.site + " [kernel]");
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "autograd");
  // A kernel for one autograd key beats the alias there.
  Reg agcuda = impl(foo, DK::AutogradCUDA, tagged("autograd-cuda"));
  EXPECT_EQ(row(table(foo), "AutogradCUDA"), "AutogradCUDA: " + agcuda.site + " [kernel]");
  EXPECT_EQ(call(foo, on(DeviceType::CUDA)), "autograd-cuda");
}

TEST(DispatcherPrecedence, ImplicitAutogradBeatsTheAutogradAliasWithoutBackendKernel) {
  const OperatorName foo{"test_dispatcher_prec7::foo", ""};
  Reg d = def("test_dispatcher_prec7::foo(Tensor x) -> Tensor");
  Reg cia = impl(foo, DK::CompositeImplicitAutograd, tagged("cia"));
  Reg ag = impl(foo, DK::Autograd, tagged("autograd"));
  EXPECT_EQ(row(table(foo), "AutogradCUDA"), "AutogradCUDA: " + cia.site + " [math kernel]");
  Reg cuda = impl(foo, DK::CUDA, tagged("cuda"));
  EXPECT_EQ(row(table(foo), "AutogradCUDA"), "AutogradCUDA: " + ag.site + " [autograd kernel]");
}

TEST(DispatcherPrecedence, BackendFallbackServesOnlyWhereNothingElseDoes) {
  const OperatorName foo{"test_dispatcher_prec8::foo", ""};
  const OperatorName bar{"test_dispatcher_prec8::bar", ""};
  Reg d1 = def("test_dispatcher_prec8::foo(Tensor x) -> Tensor");
  Reg d2 = def("test_dispatcher_prec8::bar(Tensor x) -> Tensor");
  Reg fb =
      fallback(DK::PrivateUse1, KernelFunction::make_from_boxed_function(
                                    [](OperatorKernel*, const OperatorHandle& op, DispatchKeySet,
                                       Stack* s) { recording_fallback(op, s); }));
  Reg cia = impl(bar, DK::CompositeImplicitAutograd, tagged("cia"));
  EXPECT_EQ(row(table(foo), "PrivateUse1"), "PrivateUse1: " + fb.site + " [backend fallback]");
  EXPECT_EQ(row(table(bar), "PrivateUse1"), "PrivateUse1: " + cia.site + " [math kernel]");
  EXPECT_EQ(call(foo, on(DeviceType::PrivateUse1)), "fallback:test_dispatcher_prec8::foo");
  EXPECT_EQ(call(bar, on(DeviceType::PrivateUse1)), "cia");
  Reg pu1 = impl(foo, DK::PrivateUse1, tagged("pu1"));
  EXPECT_EQ(call(foo, on(DeviceType::PrivateUse1)), "pu1");
}

TEST(DispatcherPrecedence, MissingEntriesAreAbsentFromTheTable) {
  const OperatorName foo{"test_dispatcher_prec9::foo", ""};
  Reg d = def("test_dispatcher_prec9::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  EXPECT_EQ(table(foo),
            "CPU: " + cpu.site + " [kernel]\n" +
                "Python: registered in opdispatch core [backend fallback]\n" +
                "ADInplaceOrView: " + kCoreFallthrough + "\n" + "AutogradCPU: " + kCoreFallthrough +
                "\n" + "AutogradCUDA: " + kCoreFallthrough + "\n" + "AutogradPrivateUse1: " +
                kCoreFallthrough + "\n" + "AutogradPrivateUse2: " + kCoreFallthrough + "\n" +
                "AutogradPrivateUse3: " + kCoreFallthrough + "\n" + "AutogradMeta: " +
                kCoreFallthrough + "\n" + "PythonTLSSnapshot: " + kCoreFallthrough + "\n");
}

TEST(DispatcherPrecedence, CompositeKernelsServeCallsWithoutTensors) {
  const OperatorName f{"test_dispatcher_prec10::f", ""};
  Reg d = def("test_dispatcher_prec10::f(int n) -> int");
  auto typed = [&] { return handle(f).typed<int64_t(int64_t)>(); };
  Reg cia = impl(f, DK::CompositeImplicitAutograd, [](int64_t n) { return n + 1; });
  EXPECT_EQ(typed().call(1), 2);
  Reg cea = impl(f, DK::CompositeExplicitAutograd, [](int64_t n) { return n + 10; });
  EXPECT_EQ(typed().call(1), 11);
  Stack s{int64_t{5}};
  handle(f).call_boxed(&s);
  EXPECT_EQ(s[0], IValue(int64_t{15}));
}

TEST(DispatcherPrecedence, TableFollowsEveryRegistrationAndDeregistration) {
  const OperatorName foo{"test_dispatcher_prec11::foo", ""};
  Reg d = def("test_dispatcher_prec11::foo(Tensor x) -> Tensor");
  std::string empty = table(foo);
  {
    Reg cia = impl(foo, DK::CompositeImplicitAutograd, tagged("cia"));
    {
      Reg cea = impl(foo, DK::CompositeExplicitAutograd, tagged("cea"));
      {
        Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
        EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
        dispatcher().check_invariants();
      }
      EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cea");
      dispatcher().check_invariants();
    }
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cia");
    dispatcher().check_invariants();
  }
  EXPECT_EQ(table(foo), empty);
  EXPECT_THROW(call(foo, on(DeviceType::CPU)), NotImplementedError);
}

// ---- Fallthrough and backend fallbacks ----------------------------------------------------

TEST(DispatcherFallback, FallthroughFallbackSkipsItsKey) {
  const OperatorName foo{"test_dispatcher_ft::foo", ""};
  Reg d = def("test_dispatcher_ft::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  {
    IncludeDispatchKeyGuard tracing(DK::Tracer);
    try {
      call(foo, on(DeviceType::CPU));
      FAIL() << "Tracer has no kernel and no fallback";
    } catch (const NotImplementedError& e) {
      EXPECT_THAT(e.msg(), HasSubstr("with arguments from the 'Tracer' backend"));
    }
  }
  Reg ft = fallback(DK::Tracer, KernelFunction::make_fallthrough());
  EXPECT_EQ(row(table(foo), "Tracer"), "Tracer: fallthrough " + ft.site + " [backend fallback]");
  EXPECT_FALSE(handle(foo).entry().key_mask().has(DK::Tracer));
  {
    IncludeDispatchKeyGuard tracing(DK::Tracer);
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
    EXPECT_EQ(call_boxed(foo, on(DeviceType::CPU)), "cpu");
    // An operator's own kernel beats the fallthrough fallback.
    Reg tracer = impl(foo, DK::Tracer, tagged("tracer"));
    EXPECT_TRUE(handle(foo).entry().key_mask().has(DK::Tracer));
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "tracer");
  }
  EXPECT_FALSE(handle(foo).entry().key_mask().has(DK::Tracer));
}

TEST(DispatcherFallback, FallthroughKernelOfOneOperatorSkipsItsKey) {
  const OperatorName foo{"test_dispatcher_ftk::foo", ""};
  Reg d = def("test_dispatcher_ftk::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg tracer = impl(foo, DK::Tracer, tagged("tracer"));
  Reg ft = impl(foo, DK::Tracer, CppFunction::make_fallthrough());
  EXPECT_EQ(row(table(foo), "Tracer"), "Tracer: fallthrough " + ft.site + " [kernel]");
  IncludeDispatchKeyGuard tracing(DK::Tracer);
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  ft.handle.reset();
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "tracer");
}

TEST(DispatcherFallback, CoreAutogradFallthroughsLetBackendKernelsServeTensorsWithAutogradKeys) {
  const OperatorName foo{"test_dispatcher_coreft::foo", ""};
  Reg d = def("test_dispatcher_coreft::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Tensor x = on(DeviceType::CPU);
  EXPECT_TRUE(x.key_set().has(DK::AutogradCPU));
  EXPECT_TRUE(x.key_set().has(DK::ADInplaceOrView));
  DispatchKeySet mask = handle(foo).entry().key_mask();
  EXPECT_FALSE(mask.has(DK::AutogradCPU));
  EXPECT_FALSE(mask.has(DK::ADInplaceOrView));
  EXPECT_TRUE(mask.has(DK::CPU));
  EXPECT_EQ(call(foo, x), "cpu");
}

TEST(DispatcherFallback, BackendFallbackAppliesToExistingAndFutureOperators) {
  const OperatorName a{"test_dispatcher_fbnew::a", ""};
  const OperatorName b{"test_dispatcher_fbnew::b", ""};
  Reg da = def("test_dispatcher_fbnew::a(Tensor x) -> Tensor");
  auto fb = std::make_unique<Reg>(fallback(DK::Meta, CppFunction(&recording_fallback).kernel()));
  Reg db = def("test_dispatcher_fbnew::b(Tensor x) -> Tensor");
  EXPECT_EQ(dispatcher().fallback_debug(DK::Meta), fb->site);
  EXPECT_EQ(call(a, on(DeviceType::Meta)), "fallback:test_dispatcher_fbnew::a");
  EXPECT_EQ(call(b, on(DeviceType::Meta)), "fallback:test_dispatcher_fbnew::b");
  EXPECT_EQ(call_boxed(b, on(DeviceType::Meta)), "fallback:test_dispatcher_fbnew::b");
  dispatcher().check_invariants();
  fb.reset();
  EXPECT_FALSE(dispatcher().fallback_debug(DK::Meta).has_value());
  EXPECT_THROW(call(a, on(DeviceType::Meta)), NotImplementedError);
  EXPECT_THROW(call(b, on(DeviceType::Meta)), NotImplementedError);
  EXPECT_EQ(row(table(a), "Meta"), "");
  dispatcher().check_invariants();
}

TEST(DispatcherFallback, DuplicateFallbackIsRefusedNamingBothSites) {
  const OperatorName foo{"test_dispatcher_dupfb::foo", ""};
  Reg d = def("test_dispatcher_dupfb::foo(Tensor x) -> Tensor");
  Reg first = fallback(DK::Tracer, CppFunction(&recording_fallback).kernel());
  std::string before = table(foo);
  auto loc = std::source_location::current();
  try {
    fallback(DK::Tracer, KernelFunction::make_fallthrough(), loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Tried to register multiple backend fallbacks for the same dispatch key "
              "Tracer; previous registration " +
                  first.site + ", new registration " + at(loc));
  }
  EXPECT_EQ(dispatcher().fallback_debug(DK::Tracer), first.site);
  EXPECT_EQ(table(foo), before);
}

TEST(DispatcherFallback, AnAutogradFallbackCoversTheCoresFallthroughUntilItIsGone) {
  ASSERT_EQ(dispatcher().fallback_debug(DK::AutogradCPU), "registered in opdispatch core");
  auto loc = std::source_location::current();
  {
    Reg covering = fallback(DK::AutogradCPU, CppFunction(&recording_fallback).kernel(), loc);
    EXPECT_EQ(dispatcher().fallback_debug(DK::AutogradCPU), covering.site);
    // A second one still collides, naming the first.
    try {
      fallback(DK::AutogradCPU, KernelFunction::make_fallthrough(), loc);
      FAIL() << "expected Error";
    } catch (const Error& e) {
      EXPECT_EQ(e.msg(),
                "Tried to register multiple backend fallbacks for the same dispatch key "
                "AutogradCPU; previous registration " +
                    covering.site + ", new registration " + at(loc));
    }
    dispatcher().check_invariants();
  }
  EXPECT_EQ(dispatcher().fallback_debug(DK::AutogradCPU), "registered in opdispatch core");
  dispatcher().check_invariants();
}

// An autograd fallback that records its call and passes it below autograd.
void recording_autograd_fallback(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks,
                                 Stack* stack) {
  g_trace.push_back("autograd_fallback");
  op.redispatch_boxed(ks - kAutogradKeySet, stack);
}

// Note [Autograd fallback fast path]: the fallback's keys leave the key mask for the second
// mask, and a call adds them back when a tensor has autograd state or an argument is written.
TEST(DispatcherFallback, TheAutogradFallbackServesOnlyCallsWithAutogradStateOrWrites) {
  const OperatorName foo{"test_dispatcher_agfast::foo", ""};
  const OperatorName bar{"test_dispatcher_agfast::bar_", ""};
  Reg dfoo = def("test_dispatcher_agfast::foo(Tensor x) -> Tensor");
  Reg dbar = def("test_dispatcher_agfast::bar_(Tensor(a!) x) -> Tensor(a!)");
  Reg cfoo = impl(foo, DK::CPU, tagged("cpu"));
  Reg cbar = impl(bar, DK::CPU, tagged("cpu"));
  Tensor plain = on(DeviceType::CPU);
  Tensor with_state = on(DeviceType::CPU);
  with_state.unsafe_get_impl()->set_autograd_meta(std::make_shared<int>(0));
  {
    Reg fb = fallback(DK::AutogradCPU,
                      KernelFunction::make_autograd_fallback(&recording_autograd_fallback));
    const OperatorEntry::Masks m = handle(foo).entry().masks();
    EXPECT_FALSE(m.key_mask.has(DK::AutogradCPU));
    EXPECT_TRUE(m.autograd_fallback_keys.has(DK::AutogradCPU));
    EXPECT_FALSE(m.autograd_fallback_keys.has(DK::AutogradCUDA));  // still the core's fallthrough
    EXPECT_TRUE(m.key_mask.has(DK::CPU));
    for (bool boxed : {false, true}) {
      auto run = [&](const OperatorName& op, const Tensor& x) {
        return boxed ? call_boxed(op, x) : call(op, x);
      };
      EXPECT_EQ(run(foo, plain), "cpu") << boxed;
      EXPECT_EQ(run(foo, with_state), "autograd_fallback,cpu") << boxed;
      EXPECT_EQ(run(bar, plain), "autograd_fallback,cpu") << boxed;
      {
        ExcludeDispatchKeyGuard no_grad(kAutogradKeySet);
        EXPECT_EQ(run(foo, with_state), "cpu") << boxed;
      }
    }
    // A kernel of the operator's own on Autograd takes its keys back into the key mask.
    Reg ag = impl(foo, DK::Autograd, [](const Tensor& x) {
      g_trace.push_back("autograd");
      return x;
    });
    EXPECT_TRUE(handle(foo).entry().key_mask().has(DK::AutogradCPU));
    EXPECT_TRUE(handle(foo).entry().autograd_fallback_keys().empty());
    EXPECT_EQ(call(foo, plain), "autograd");
    dispatcher().check_invariants();
  }
  const OperatorEntry::Masks m = handle(foo).entry().masks();
  EXPECT_FALSE(m.key_mask.has(DK::AutogradCPU));
  EXPECT_TRUE(m.autograd_fallback_keys.empty());
  EXPECT_EQ(call(foo, with_state), "cpu");
  dispatcher().check_invariants();
}

TEST(DispatcherFallback, RegisterFallbackRejectsAliasKeys) {
  try {
    fallback(DK::CompositeImplicitAutograd, KernelFunction::make_fallthrough());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("CompositeImplicitAutograd is not a runtime dispatch key"));
  }
}

// ---- Error messages --------------------------------------------------------------------------

TEST(DispatcherErrors, MissingKernelNamesBackendAvailableKeysAndTable) {
  const OperatorName foo{"test_dispatcher_missing::foo", ""};
  Reg d = def("test_dispatcher_missing::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  const std::string t = table(foo);
  for (bool boxed : {false, true}) {
    try {
      boxed ? call_boxed(foo, on(DeviceType::CUDA)) : call(foo, on(DeviceType::CUDA));
      FAIL() << "expected NotImplementedError";
    } catch (const NotImplementedError& e) {
      EXPECT_THAT(e.msg(), StartsWith("Could not run 'test_dispatcher_missing::foo' with arguments "
                                      "from the 'CUDA' backend. "));
      EXPECT_THAT(
          e.msg(),
          HasSubstr("'test_dispatcher_missing::foo' is only available for these "
                    "backends: [CPU, Python, ADInplaceOrView, AutogradCPU, AutogradCUDA, "
                    "AutogradPrivateUse1, AutogradPrivateUse2, AutogradPrivateUse3, AutogradMeta, "
                    "PythonTLSSnapshot].\n\n" +
                    t));
      EXPECT_THAT(e.msg(), EndsWith(t));
    }
  }
}

TEST(DispatcherErrors, MissingKernelNamesTheOverload) {
  const OperatorName foo{"test_dispatcher_missing2::foo", "out"};
  Reg d = def("test_dispatcher_missing2::foo.out(Tensor x) -> Tensor");
  try {
    call(foo, on(DeviceType::Meta));
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_THAT(e.msg(), StartsWith("Could not run 'test_dispatcher_missing2::foo.out' with "
                                    "arguments from the 'Meta' backend."));
    EXPECT_THAT(e.msg(),
                HasSubstr("is only available for these backends: [Python, ADInplaceOrView, "
                          "AutogradCPU, AutogradCUDA, AutogradPrivateUse1, AutogradPrivateUse2, "
                          "AutogradPrivateUse3, AutogradMeta, PythonTLSSnapshot]."));
  }
}

// Naming the PrivateUse1 backend cannot be undone, so it happens in a child process.
TEST(DispatcherErrorsDeathTest, MissingKernelSpellsPrivateUse1WithTheBackendName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto check = [] {
    register_privateuse1_backend("npu");
    const OperatorName foo{"test_dispatcher_npu::foo", ""};
    Reg d = def("test_dispatcher_npu::foo(Tensor x) -> Tensor");
    Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
    std::string t = table(foo);
    bool ok = row(t, "AutogradNPU") == "AutogradNPU: " + kCoreFallthrough;
    try {
      call(foo, on(DeviceType::PrivateUse1));
    } catch (const NotImplementedError& e) {
      std::fprintf(stderr, "%s\n", e.msg().c_str());
      ok = ok && e.msg().find("with arguments from the 'NPU' backend") != std::string::npos &&
           e.msg().find(
               "only available for these backends: [CPU, Python, ADInplaceOrView, AutogradCPU, "
               "AutogradCUDA, AutogradNPU, AutogradPrivateUse2, AutogradPrivateUse3, "
               "AutogradMeta, PythonTLSSnapshot].") != std::string::npos;
      std::_Exit(ok ? 0 : 1);
    }
    std::_Exit(2);
  };
  EXPECT_EXIT(check(), ::testing::ExitedWithCode(0), "Could not run 'test_dispatcher_npu::foo'");
}

TEST(DispatcherErrors, CallWithoutTensorsAndNoCompositeKernelExplainsTheMissingFallback) {
  const OperatorName f{"test_dispatcher_notensor::f", ""};
  const OperatorName g{"test_dispatcher_notensor::g", ""};
  Reg df = def("test_dispatcher_notensor::f(int n) -> int");
  Reg dg = def("test_dispatcher_notensor::g(Tensor[] xs) -> int");
  Reg cf = impl(f, DK::CPU, [](int64_t n) { return n; });
  Reg cg = impl(g, DK::CPU, [](const std::vector<Tensor>& xs) { return int64_t{0}; });
  auto expected = [&](const OperatorName& op) {
    return "There were no tensor arguments to this function (e.g., you passed an empty list of "
           "Tensors), but no fallback function is registered for schema " +
           op.to_string() +
           ".  This usually means that this function requires a non-empty list of Tensors, or "
           "that you (the operator writer) forgot to register a fallback function.  Available "
           "functions are [CPU, Python, ADInplaceOrView, AutogradCPU, AutogradCUDA, "
           "AutogradPrivateUse1, AutogradPrivateUse2, AutogradPrivateUse3, AutogradMeta, "
           "PythonTLSSnapshot].\n\n" +
           table(op);
  };
  try {
    handle(f).typed<int64_t(int64_t)>().call(3);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), expected(f));
  }
  try {
    handle(g).typed<int64_t(const std::vector<Tensor>&)>().call({});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), expected(g));
  }
  Stack s{std::vector<Tensor>{}};
  try {
    handle(g).call_boxed(&s);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), expected(g));
  }
}

TEST(DispatcherErrors, DuplicateDefIsRefusedNamingBothSitesAndLeavesStateUnchanged) {
  const OperatorName foo{"test_dispatcher_dupdef::foo", ""};
  Reg d = def("test_dispatcher_dupdef::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  std::string before = state(foo);
  auto loc = std::source_location::current();
  try {
    def("test_dispatcher_dupdef::foo(Tensor x) -> Tensor", loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Tried to register an operator (test_dispatcher_dupdef::foo(Tensor x) -> Tensor) "
              "with the same name and overload name multiple times. Each overload's schema should "
              "only be registered with a single call to def(). Duplicate registration: " +
                  at(loc) + ". Original registration: " + d.site);
  }
  EXPECT_EQ(state(foo), before);
  EXPECT_EQ(handle(foo).entry().def_count(), 1);
  // A different schema for the same name and overload is a duplicate too.
  EXPECT_THROW(def("test_dispatcher_dupdef::foo(Tensor x, Tensor y) -> Tensor"), Error);
  EXPECT_EQ(state(foo), before);
  dispatcher().check_invariants();
}

std::string mismatch(const std::string& op, const std::string& expected,
                     const std::string& def_site, const std::string& inferred,
                     const std::string& impl_site, const std::string& reason) {
  return "Inferred operator schema for a C++ kernel function doesn't match the expected function "
         "schema.\n  operator: " +
         op + "\n  expected schema: " + expected + "\n    " + def_site +
         "\n  inferred schema: " + inferred + "\n    " + impl_site + "\n  reason: " + reason;
}

TEST(DispatcherErrors, SchemaMismatchDefThenImpl) {
  const OperatorName foo{"test_dispatcher_mm1::foo", ""};
  Reg d = def("test_dispatcher_mm1::foo(Tensor x, Tensor y) -> Tensor");
  std::string before = state(foo);
  auto loc = std::source_location::current();
  try {
    impl(foo, DK::CPU, tagged("cpu"), loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), mismatch("test_dispatcher_mm1::foo",
                                "test_dispatcher_mm1::foo(Tensor x, Tensor y) -> Tensor", d.site,
                                "(Tensor _0) -> Tensor _0", at(loc),
                                "The number of arguments is different. 2 vs 1."));
  }
  EXPECT_EQ(state(foo), before);
  EXPECT_EQ(handle(foo).entry().def_and_impl_count(), 1);
}

TEST(DispatcherErrors, SchemaMismatchImplThenDef) {
  const OperatorName foo{"test_dispatcher_mm2::foo", ""};
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  std::string before = state(foo);
  auto loc = std::source_location::current();
  try {
    def("test_dispatcher_mm2::foo(Tensor x, Tensor y) -> Tensor", loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), mismatch("test_dispatcher_mm2::foo",
                                "test_dispatcher_mm2::foo(Tensor x, Tensor y) -> Tensor", at(loc),
                                "(Tensor _0) -> Tensor _0", cpu.site,
                                "The number of arguments is different. 2 vs 1."));
  }
  EXPECT_EQ(state(foo), before);
  EXPECT_FALSE(dispatcher().find_schema(foo).has_value());
  dispatcher().check_invariants();
}

TEST(DispatcherErrors, SchemaMismatchInReturnCount) {
  const OperatorName foo{"test_dispatcher_mm3::foo", ""};
  Reg d = def("test_dispatcher_mm3::foo(Tensor x) -> Tensor");
  auto loc = std::source_location::current();
  try {
    impl(
        foo, DK::CPU, [](const Tensor& x) { return std::make_tuple(x, x); }, loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              mismatch("test_dispatcher_mm3::foo", "test_dispatcher_mm3::foo(Tensor x) -> Tensor",
                       d.site, "(Tensor _0) -> (Tensor _0, Tensor _1)", at(loc),
                       "The number of returns is different. 1 vs 2."));
  }
  EXPECT_FALSE(handle(foo).has_kernel_for_dispatch_key(DK::CPU));
}

TEST(DispatcherErrors, SchemaMismatchInArgumentType) {
  const OperatorName foo{"test_dispatcher_mm4::foo", ""};
  Reg d = def("test_dispatcher_mm4::foo(Tensor x, int n) -> Tensor");
  auto loc = std::source_location::current();
  try {
    impl(
        foo, DK::CPU, [](const Tensor& x, double) { return x; }, loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(), mismatch("test_dispatcher_mm4::foo",
                                "test_dispatcher_mm4::foo(Tensor x, int n) -> Tensor", d.site,
                                "(Tensor _0, float _1) -> Tensor _0", at(loc),
                                "Type mismatch in argument 2: int vs float."));
  }
}

TEST(DispatcherErrors, SchemaMismatchAgainstAnyExistingKernelRefusesTheDef) {
  const OperatorName foo{"test_dispatcher_mm5::foo", ""};
  Reg ok = impl(foo, DK::CUDA, [](const Tensor& x, int64_t) { return x; });
  Reg boxed = impl(foo, DK::Meta, &recording_fallback);  // boxed kernels have no inferred schema
  std::string before = state(foo);
  try {
    def("test_dispatcher_mm5::foo(Tensor x, float n) -> Tensor");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("reason: Type mismatch in argument 2: float vs int."));
    EXPECT_THAT(e.msg(), HasSubstr("\n    " + ok.site + "\n"));
  }
  EXPECT_EQ(state(foo), before);
  // SymInt matches int.
  Reg d = def("test_dispatcher_mm5::foo(Tensor x, SymInt n) -> Tensor");
  EXPECT_TRUE(dispatcher().find_schema(foo).has_value());
}

TEST(DispatcherErrors, CppSignatureMismatchBetweenKernelsNamesBoth) {
  const OperatorName foo{"test_dispatcher_sig::foo", ""};
  Reg d = def("test_dispatcher_sig::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  std::string before = state(foo);
  auto loc = std::source_location::current();
  try {
    impl(
        foo, DK::CUDA, [](Tensor x) { return x; }, loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "\nMismatch in kernel C++ signatures\n  operator: "
              "test_dispatcher_sig::foo(Tensor x) -> Tensor\n    " +
                  d.site + "\n  kernel 1: " + CppSignature::make<Tensor(const Tensor&)>().name() +
                  "\n    dispatch key: CPU\n    " + a.site +
                  "\n  kernel 2: " + CppSignature::make<Tensor(Tensor)>().name() +
                  "\n    dispatch key: CUDA\n    " + at(loc) + "\n");
  }
  EXPECT_EQ(state(foo), before);
  // Boxed kernels have no C++ signature and fit any operator.
  EXPECT_NO_THROW(impl(foo, DK::Meta, &recording_fallback));
}

TEST(DispatcherErrors, TypedWithAWrongSignatureNamesBoth) {
  const OperatorName foo{"test_dispatcher_typed::foo", ""};
  Reg d = def("test_dispatcher_typed::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  EXPECT_NO_THROW(handle(foo).typed<Tensor(const Tensor&)>());
  try {
    handle(foo).typed<Tensor(Tensor)>();
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(
        e.msg(),
        HasSubstr("Tried to access or call an operator with a wrong signature.\n"
                  "  operator: test_dispatcher_typed::foo(Tensor x) -> Tensor\n    " +
                  d.site + "\n  correct signature:  " +
                  CppSignature::make<Tensor(const Tensor&)>().name() + "\n    " + a.site +
                  "\n  accessed/called as: " + CppSignature::make<Tensor(Tensor)>().name() + "\n"));
  }
}

TEST(DispatcherErrors, TypedOnABoxedOnlyOperatorChecksAgainstTheSchema) {
  const OperatorName foo{"test_dispatcher_typed2::foo", ""};
  Reg d = def("test_dispatcher_typed2::foo(Tensor x, int n) -> Tensor");
  Reg boxed = impl(foo, DK::CPU, [](const OperatorHandle&, Stack* s) { s->pop_back(); });
  EXPECT_NO_THROW((handle(foo).typed<Tensor(const Tensor&, int64_t)>()));
  try {
    handle(foo).typed<Tensor(const Tensor&, double)>();
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("Tried to access or call an operator with a wrong signature."));
    EXPECT_THAT(e.msg(), HasSubstr("(schema (Tensor _0, float _1) -> Tensor _0)"));
    EXPECT_THAT(e.msg(), HasSubstr("reason: Type mismatch in argument 2: int vs float."));
  }
  float buf[2] = {};
  Tensor x = from_blob(buf, {2}, kFloat);
  EXPECT_TRUE((handle(foo).typed<Tensor(const Tensor&, int64_t)>().call(x, 3).is_same(x)));
}

// ---- Dumps, invariants, introspection ------------------------------------------------------

TEST(DispatcherDump, DumpStateFormat) {
  const OperatorName foo{"test_dispatcher_dump::foo", ""};
  Reg d = def("test_dispatcher_dump::foo(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("a"));
  Reg b = impl(foo, DK::CPU, tagged("b"));
  Reg boxed = impl(foo, DK::CUDA, &recording_fallback);
  Reg ag = impl(foo, DK::AutogradCPU, tagged("ag"));
  Reg cia = impl(foo, DK::CompositeImplicitAutograd, tagged("cia"));
  const std::string s = " :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n";
  EXPECT_EQ(state(foo),
            "name: test_dispatcher_dump::foo\n"
            "schema: test_dispatcher_dump::foo(Tensor x) -> Tensor\n"
            "debug: " +
                d.site + "\nalias analysis kind: FROM_SCHEMA\nCPU: " + b.site + s +
                "CPU (inactive): " + a.site + s + "CUDA: " + boxed.site + " :: (none) [ boxed ]\n" +
                "AutogradCPU: " + ag.site + s + "CompositeImplicitAutograd[alias]: " + cia.site +
                s);
}

TEST(DispatcherDump, DumpStateOfADefOnly) {
  const OperatorName foo{"test_dispatcher_dump2::foo", "bar"};
  Reg d = def("test_dispatcher_dump2::foo.bar(Tensor x, *, int n=1) -> Tensor");
  EXPECT_EQ(state(foo),
            "name: test_dispatcher_dump2::foo.bar\n"
            "schema: test_dispatcher_dump2::foo.bar(Tensor x, *, int n=1) -> Tensor\n"
            "debug: " +
                d.site + "\nalias analysis kind: FROM_SCHEMA\n");
}

// Note [Alias analysis kind]: the kind a def gives is shown under its debug line; one that
// gives none shows PyTorch's "CONSERVATIVE (default)". An aliasing schema needs FROM_SCHEMA:
// the refused def leaves no operator behind.
TEST(DispatcherDump, DumpStateShowsTheAliasAnalysisKind) {
  const OperatorName foo{"test_dispatcher_alias::foo", ""};
  const std::string schema = "test_dispatcher_alias::foo(Tensor x) -> Tensor";
  const std::string head = "name: test_dispatcher_alias::foo\nschema: " + schema + "\ndebug: d\n";
  for (auto [kind, line] : std::vector<std::pair<std::optional<AliasAnalysisKind>, std::string>>{
           {AliasAnalysisKind::FROM_SCHEMA, "FROM_SCHEMA"},
           {AliasAnalysisKind::CONSERVATIVE, "CONSERVATIVE"},
           {AliasAnalysisKind::PURE_FUNCTION, "PURE_FUNCTION"},
           {std::nullopt, "CONSERVATIVE (default)"}}) {
    RegistrationHandle h = dispatcher().register_def(parse_schema(schema), "d", TagSet(), kind);
    EXPECT_EQ(state(foo), head + "alias analysis kind: " + line + "\n");
    EXPECT_EQ(handle(foo).entry().alias_analysis(), kind.value_or(AliasAnalysisKind::CONSERVATIVE));
  }
  EXPECT_FALSE(dispatcher().find_op(foo));

  for (std::optional<AliasAnalysisKind> kind :
       {std::optional(AliasAnalysisKind::PURE_FUNCTION), std::optional<AliasAnalysisKind>()}) {
    EXPECT_EQ(test_util::error_text<Error>([&] {
                (void)dispatcher().register_def(
                    parse_schema("test_dispatcher_alias::foo(Tensor(a) x) -> Tensor(a)"), "d",
                    TagSet(), kind);
              }),
              "In operator registration: Tried to register operator "
              "test_dispatcher_alias::foo(Tensor(a) x) -> Tensor(a) with aliasing information in "
              "the schema but without AliasAnalysisKind::FROM_SCHEMA. (d)");
  }
  EXPECT_FALSE(dispatcher().find_op(foo));
}

TEST(DispatcherDump, CheckInvariantsHoldsThroughAMixOfRegistrations) {
  const OperatorName foo{"test_dispatcher_inv::foo", ""};
  const OperatorName bar{"test_dispatcher_inv::bar", ""};
  std::vector<Reg> regs;
  regs.push_back(impl(foo, DK::CPU, tagged("cpu")));
  regs.push_back(def("test_dispatcher_inv::foo(Tensor x) -> Tensor"));
  regs.push_back(impl(foo, DK::Autograd, tagged("ag")));
  regs.push_back(fallback(DK::Tracer, KernelFunction::make_fallthrough()));
  regs.push_back(impl(bar, DK::CompositeImplicitAutograd, tagged("cia")));
  regs.push_back(impl(foo, DK::CPU, tagged("cpu2")));
  regs.push_back(impl(foo, DK::Tracer, CppFunction::make_fallthrough()));
  regs.push_back(impl(bar, DK::CompositeExplicitAutogradNonFunctional, tagged("ceanf")));
  EXPECT_NO_THROW(dispatcher().check_invariants());
  EXPECT_NO_THROW(handle(foo).entry().check_invariants());
  // Undo in an order other than the reverse of registration.
  for (size_t i : {3u, 0u, 6u, 1u, 7u, 2u, 5u, 4u}) {
    regs[i].handle.reset();
    EXPECT_NO_THROW(dispatcher().check_invariants()) << "after undoing registration " << i;
  }
  EXPECT_FALSE(dispatcher().find_op(foo).has_value());
  EXPECT_FALSE(dispatcher().find_op(bar).has_value());
}

TEST(DispatcherDump, RegistrationsForDispatchKey) {
  const OperatorName foo{"test_dispatcher_regs::foo", ""};
  const OperatorName bar{"test_dispatcher_regs::bar", ""};
  const OperatorName qux{"test_dispatcher_regs::qux", ""};
  Reg d1 = def("test_dispatcher_regs::foo(Tensor x) -> Tensor");
  Reg d2 = def("test_dispatcher_regs::bar(Tensor x) -> Tensor");
  Reg d3 = def("test_dispatcher_regs::baz(Tensor x) -> Tensor");
  Reg a = impl(foo, DK::CPU, tagged("cpu"));
  Reg b = impl(bar, DK::CUDA, tagged("cuda"));
  Reg c = impl(qux, DK::CompositeImplicitAutograd, tagged("cia"));
  auto for_key = [](std::optional<DispatchKey> k) {
    return in_namespace(dispatcher().registrations_for_dispatch_key(k), "test_dispatcher_regs");
  };
  EXPECT_THAT(for_key(DK::CPU), ElementsAre("test_dispatcher_regs::foo"));
  EXPECT_THAT(for_key(DK::CUDA), ElementsAre("test_dispatcher_regs::bar"));
  EXPECT_THAT(for_key(DK::CompositeImplicitAutograd), ElementsAre("test_dispatcher_regs::qux"));
  EXPECT_THAT(for_key(DK::Meta), IsEmpty());
  EXPECT_THAT(for_key(std::nullopt),
              ElementsAre("test_dispatcher_regs::bar", "test_dispatcher_regs::baz",
                          "test_dispatcher_regs::foo", "test_dispatcher_regs::qux"));
  std::vector<std::string> all = dispatcher().registrations_for_dispatch_key(std::nullopt);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
}

// ---- Redispatch ------------------------------------------------------------------------------

std::optional<TypedOperatorHandle<Tensor(const Tensor&)>> g_op;

Tensor autograd_redispatching(DispatchKeySet ks, const Tensor& x) {
  g_trace.push_back("autograd");
  EXPECT_TRUE(ks.has(DK::AutogradCPU)) << ks.to_string();
  return g_op->redispatch(ks - kAutogradKeySet, x);
}

Tensor autograd_below(const Tensor& x) {
  g_trace.push_back("autograd");
  AutoDispatchBelowAutograd guard;
  EXPECT_TRUE(tls_is_dispatch_key_excluded(DK::AutogradCPU));
  return g_op->call(x);
}

void autograd_boxed(const OperatorHandle& op, DispatchKeySet ks, Stack* s) {
  g_trace.push_back("autograd-boxed");
  op.redispatch_boxed(ks - kAutogradKeySet, s);
}

TEST(DispatcherRedispatch, AutogradKernelRedispatchesBelowItsKey) {
  const OperatorName foo{"test_dispatcher_redispatch::foo", ""};
  Reg d = def("test_dispatcher_redispatch::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg ag = impl(foo, DK::Autograd, &autograd_redispatching);
  g_op.emplace(handle(foo).typed<Tensor(const Tensor&)>());
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "autograd,cpu");
  EXPECT_EQ(call_boxed(foo, on(DeviceType::CPU)), "autograd,cpu");
  g_op.reset();
}

TEST(DispatcherRedispatch, AutogradKernelCallsAgainUnderAutoDispatchBelowAutograd) {
  const OperatorName foo{"test_dispatcher_below::foo", ""};
  Reg d = def("test_dispatcher_below::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg ag = impl(foo, DK::AutogradCPU, &autograd_below);
  g_op.emplace(handle(foo).typed<Tensor(const Tensor&)>());
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "autograd,cpu");
  EXPECT_FALSE(tls_is_dispatch_key_excluded(DK::AutogradCPU)) << "the guard restores the TLS";
  // Under the guard from the outside, the autograd kernel is skipped altogether.
  {
    AutoDispatchBelowAutograd guard;
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  }
  g_op.reset();
}

TEST(DispatcherRedispatch, BoxedAutogradKernelRedispatchesBoxed) {
  const OperatorName foo{"test_dispatcher_redispatch_boxed::foo", ""};
  Reg d = def("test_dispatcher_redispatch_boxed::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg ag = impl(foo, DK::Autograd, &autograd_boxed);
  EXPECT_EQ(call_boxed(foo, on(DeviceType::CPU)), "autograd-boxed,cpu");
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "autograd-boxed,cpu");
}

// ---- Reclamation -----------------------------------------------------------------------------

TEST(DispatcherReclaim, DeregisteredKernelsAreRetiredUntilReclaimed) {
  const OperatorName foo{"test_dispatcher_reclaim::foo", ""};
  dispatcher().reclaim();
  ASSERT_EQ(dispatcher().retired_count(), 0u);
  auto token = std::make_shared<int>(0);
  Reg d = def("test_dispatcher_reclaim::foo(Tensor x) -> Tensor");
  {
    Reg cpu = impl(foo, DK::CPU, [token](const Tensor& x) { return x; });
    EXPECT_EQ(token.use_count(), 2);
  }
  EXPECT_GE(dispatcher().retired_count(), 1u);
  EXPECT_EQ(token.use_count(), 2) << "a retired kernel may still be running on another thread";
  size_t retired = dispatcher().retired_count();
  EXPECT_EQ(dispatcher().reclaim(), retired);
  EXPECT_EQ(dispatcher().retired_count(), 0u);
  EXPECT_EQ(token.use_count(), 1);
}

TEST(DispatcherReclaim, NothingIsReclaimedWhileADispatchIsInFlightOnThisThread) {
  const OperatorName foo{"test_dispatcher_reclaim2::foo", ""};
  const OperatorName bar{"test_dispatcher_reclaim2::bar", ""};
  Reg d = def("test_dispatcher_reclaim2::foo(Tensor x) -> Tensor");
  static size_t reclaimed_inside = 99;
  static size_t retired_inside = 0;
  Reg cpu = impl(foo, DK::CPU, [](const Tensor& x) {
    retired_inside = Dispatcher::singleton().retired_count();
    reclaimed_inside = Dispatcher::singleton().reclaim();
    return x;
  });
  { Reg doomed = impl(bar, DK::CPU, tagged("bar")); }
  ASSERT_GE(dispatcher().retired_count(), 1u);
  float buf[2] = {};
  handle(foo).typed<Tensor(const Tensor&)>().call(from_blob(buf, {2}, kFloat));
  EXPECT_GE(retired_inside, 1u);
  EXPECT_EQ(reclaimed_inside, 0u);
  EXPECT_GE(dispatcher().reclaim(), 1u);
  EXPECT_EQ(dispatcher().retired_count(), 0u);
}

// ---- Registration handles --------------------------------------------------------------------

TEST(RegistrationHandle, MoveTransfersOwnershipAndResetIsIdempotent) {
  const OperatorName foo{"test_dispatcher_handle::foo", ""};
  RegistrationHandle moved;
  EXPECT_FALSE(moved.active());
  {
    Reg d = def("test_dispatcher_handle::foo(Tensor x) -> Tensor");
    EXPECT_TRUE(d.handle.active());
    moved = std::move(d.handle);
    EXPECT_FALSE(d.handle.active());  // NOLINT(bugprone-use-after-move): moved-from is empty
  }
  EXPECT_TRUE(dispatcher().find_schema(foo).has_value()) << "the moved-to handle owns the def";
  moved.reset();
  EXPECT_FALSE(moved.active());
  EXPECT_FALSE(dispatcher().find_op(foo).has_value());
  moved.reset();
}

TEST(RegistrationHandle, MoveAssignmentUndoesTheTargetsRegistration) {
  const OperatorName a{"test_dispatcher_handle2::a", ""};
  const OperatorName b{"test_dispatcher_handle2::b", ""};
  Reg da = def("test_dispatcher_handle2::a(Tensor x) -> Tensor");
  Reg db = def("test_dispatcher_handle2::b(Tensor x) -> Tensor");
  da.handle = std::move(db.handle);
  EXPECT_FALSE(dispatcher().find_op(a).has_value());
  EXPECT_TRUE(dispatcher().find_op(b).has_value());
}

}  // namespace
}  // namespace opd

namespace opd {
namespace {

TEST(Dispatcher, KernelsForPerBackendFunctionalityKeysAreRefused) {
  Library lib(Library::FRAGMENT, "test_dispatcher_functionality");
  lib.def("f(Tensor x) -> Tensor");
  try {
    lib.impl("f", DispatchKey::Dense, [](const Tensor& x) { return x; });
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), ::testing::HasSubstr("cannot register a kernel to Dense"));
    EXPECT_THAT(e.msg(),
                ::testing::HasSubstr("CPU, CUDA, PrivateUse1, PrivateUse2, PrivateUse3, Meta"));
  }
  EXPECT_THROW(lib.impl("f", DispatchKey::AutogradFunctionality, [](const Tensor& x) { return x; }),
               Error);
  auto op = Dispatcher::singleton().find_op(OperatorName{"test_dispatcher_functionality::f", ""});
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->entry().def_and_impl_count(), 1);
}

}  // namespace
}  // namespace opd
