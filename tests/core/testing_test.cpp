// The GoogleTest helpers of opd/testing.h.

#include "opd/testing.h"

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "opd/dispatcher.h"
#include "opd/library.h"
#include "opd/tensor.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::cpu_tensor;
using ::testing::HasSubstr;

int64_t one(const Tensor&) { return 1; }
int64_t seven(const Tensor&) { return 7; }
int64_t eight(const Tensor&) { return 8; }

int64_t call(const char* op, const char* overload = "") {
  return Dispatcher::singleton()
      .find_schema_or_throw(op, overload)
      .typed<int64_t(const Tensor&)>()
      .call(cpu_tensor());
}

TEST(ScopedKernelOverride, ServesInsideTheScopeAndRestoresThePreviousKernelAfter) {
  Library def(Library::DEF, "testing_test");
  def.def("pick(Tensor x) -> int");
  def.def("pick.other(Tensor x) -> int");
  Library cpu(Library::IMPL, "testing_test", DispatchKey::CPU);
  cpu.impl("pick", &one);
  cpu.impl("pick.other", &one);

  EXPECT_EQ(call("testing_test::pick"), 1);
  {
    test::ScopedKernelOverride outer("testing_test::pick", DispatchKey::CPU, &seven);
    EXPECT_EQ(call("testing_test::pick"), 7);
    {
      test::ScopedKernelOverride inner("testing_test::pick", DispatchKey::CPU, &eight);
      EXPECT_EQ(call("testing_test::pick"), 8);
    }
    EXPECT_EQ(call("testing_test::pick"), 7);
    EXPECT_EQ(call("testing_test::pick", "other"), 1);  // the other overload is untouched
  }
  EXPECT_EQ(call("testing_test::pick"), 1);

  {
    test::ScopedKernelOverride overload("testing_test::pick.other", DispatchKey::CPU,
                                        [](const Tensor&) -> int64_t { return 9; });
    EXPECT_EQ(call("testing_test::pick", "other"), 9);
    EXPECT_EQ(call("testing_test::pick"), 1);
  }
  EXPECT_EQ(call("testing_test::pick", "other"), 1);
}

TEST(ScopedKernelOverride, ServesAKeyThatHadNoKernelAndRemovesItAfter) {
  Library def(Library::DEF, "testing_test_meta");
  def.def("pick(Tensor x) -> int");
  auto op = Dispatcher::singleton().find_schema_or_throw("testing_test_meta::pick", "");
  {
    test::ScopedKernelOverride meta("testing_test_meta::pick", DispatchKey::Meta, &seven);
    EXPECT_TRUE(op.has_kernel_for_dispatch_key(DispatchKey::Meta));
  }
  EXPECT_FALSE(op.has_kernel_for_dispatch_key(DispatchKey::Meta));
}

TEST(ScopedKernelOverride, RefusesAnUndefinedOperatorOrAMalformedName) {
  try {
    test::ScopedKernelOverride o("testing_test::nothing_here", DispatchKey::CPU, &one);
    ADD_FAILURE() << "overriding an undefined operator succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("testing_test::nothing_here is not defined"));
  }
  EXPECT_TRUE(test::no_dangling_impls());  // the refused override left nothing behind
  try {
    test::ScopedKernelOverride o("no_namespace", DispatchKey::CPU, &one);
    ADD_FAILURE() << "a name without a namespace was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("'no_namespace' is not an operator name"));
  }
}

TEST(ScopedKernelOverride, RefusesAKernelWhoseSignatureDisagreesWithTheSchema) {
  Library def(Library::DEF, "testing_test_sig");
  def.def("pick(Tensor x) -> int");
  EXPECT_THROW(test::ScopedKernelOverride("testing_test_sig::pick", DispatchKey::CPU,
                                          [](const Tensor&, int64_t) -> int64_t { return 0; }),
               Error);
  EXPECT_FALSE(Dispatcher::singleton()
                   .find_schema_or_throw("testing_test_sig::pick", "")
                   .has_kernel_for_dispatch_key(DispatchKey::CPU));
}

TEST(ScopedPlugin, LoadsForTheScopeAndUnloadsAfter) {
  const std::string manifest = fixtures::manifest("good_v1", "good");
  {
    test::ScopedPlugin good(manifest);
    EXPECT_EQ(good.status().state, PluginState::Loaded);
    EXPECT_EQ(good.status().name, "good");
    EXPECT_EQ(call("fixture::value"), 1);
    {
      test::ScopedPlugin again(manifest);  // already loaded: left loaded
    }
    EXPECT_EQ(plugins().status("good").state, PluginState::Loaded);
    test::ScopedKernelOverride override("fixture::value", DispatchKey::CPU, &seven);
    EXPECT_EQ(call("fixture::value"), 7);
  }
  EXPECT_EQ(plugins().status("good").state, PluginState::Unloaded);
  EXPECT_FALSE(Dispatcher::singleton().find_op(OperatorName("fixture::value", "")));
  test::expect_no_dangling_impls();
}

TEST(ScopedPlugin, ThrowsWhenThePluginIsUnavailableOrRefused) {
  try {
    test::ScopedPlugin p(fixtures::manifest("unavailable"));
    ADD_FAILURE() << "an unavailable plugin was accepted";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("'unavailable' is unavailable: no fixture device"));
  }
  EXPECT_THROW(test::ScopedPlugin(fixtures::manifest("missing_entry")), PluginError);
}

TEST(ExpectNoDanglingImpls, ListsTheOperatorsWithKernelsButNoSchema) {
  test::expect_no_dangling_impls();
  Library impl(Library::IMPL, "testing_test_dangling", DispatchKey::CPU);
  impl.impl("orphan", &one);
  EXPECT_NONFATAL_FAILURE(test::expect_no_dangling_impls(), "testing_test_dangling::orphan");
  EXPECT_NONFATAL_FAILURE(test::expect_no_dangling_impls(),
                          "1 operator(s) have kernels but no schema");
  impl.reset();
  test::expect_no_dangling_impls();
}

// The example of README.md, "Testing helpers", against the example plugin of plugins/.
TEST(TestingHelpers, ReadmeExample) {
  try {
    plugins().status("example");
  } catch (const PluginError& e) {
    GTEST_SKIP() << "the example plugin is not built: " << e.msg();
  }
  test::ScopedPlugin example("example");  // by name, from the search path; unloaded at the end
  int calls = 0;
  test::ScopedKernelOverride spy("example::scale", DispatchKey::CPU,
                                 [&calls](const Tensor& self, double factor) {
                                   ++calls;
                                   EXPECT_EQ(factor, 2.0);
                                   return self;
                                 });
  auto twice = Dispatcher::singleton()
                   .find_schema_or_throw("example::twice", "")
                   .typed<Tensor(const Tensor&)>();
  twice.call(cpu_tensor());  // the composite kernel re-enters the dispatcher: it reaches the spy
  EXPECT_EQ(calls, 1);
  test::expect_no_dangling_impls();
}

}  // namespace
}  // namespace opd
