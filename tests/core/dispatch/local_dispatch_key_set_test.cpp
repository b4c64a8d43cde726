// The thread-local included/excluded key sets and their guards, alone and as they steer a call
// through the dispatcher: ((OR of argument key sets) | included) - excluded, exclusion winning.

#include "opd/local_dispatch_key_set.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/dispatch/dispatch_helpers.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using DK = DispatchKey;
using test_util::call;
using test_util::call_boxed;
using test_util::def;
using test_util::impl;
using test_util::on;
using test_util::Reg;
using test_util::tagged;

TEST(LocalDispatchKeySet, GuardsNestAndRestoreOnlyWhatTheyAdded) {
  EXPECT_TRUE(tls_local_dispatch_key_set().included.empty());
  {
    IncludeDispatchKeyGuard outer(DK::Tracer);
    EXPECT_TRUE(tls_is_dispatch_key_included(DK::Tracer));
    {
      IncludeDispatchKeyGuard inner(DispatchKeySet(DK::Tracer) | DispatchKeySet(DK::Meta));
      EXPECT_TRUE(tls_is_dispatch_key_included(DK::Meta));
    }
    // The inner guard removed Meta but not Tracer, which the outer one added.
    EXPECT_TRUE(tls_is_dispatch_key_included(DK::Tracer));
    EXPECT_FALSE(tls_is_dispatch_key_included(DK::Meta));
  }
  EXPECT_FALSE(tls_is_dispatch_key_included(DK::Tracer));
}

TEST(LocalDispatchKeySet, AutoDispatchBelowAutogradExcludesEveryAutogradKey) {
  {
    AutoDispatchBelowAutograd guard;
    EXPECT_EQ(tls_local_dispatch_key_set().excluded, kAutogradKeySet);
    {
      ExcludeDispatchKeyGuard again(DK::AutogradCPU);
      EXPECT_TRUE(tls_is_dispatch_key_excluded(DK::AutogradCPU));
    }
    EXPECT_TRUE(tls_is_dispatch_key_excluded(DK::AutogradCPU));
  }
  EXPECT_TRUE(tls_local_dispatch_key_set().excluded.empty());
}

TEST(LocalDispatchKeySet, SettersToggleSingleKeys) {
  tls_set_dispatch_key_included(DK::Tracer, true);
  tls_set_dispatch_key_excluded(DK::ADInplaceOrView, true);
  EXPECT_TRUE(tls_is_dispatch_key_included(DK::Tracer));
  EXPECT_TRUE(tls_is_dispatch_key_excluded(DK::ADInplaceOrView));
  tls_set_dispatch_key_included(DK::Tracer, false);
  tls_set_dispatch_key_excluded(DK::ADInplaceOrView, false);
  EXPECT_TRUE(tls_local_dispatch_key_set().included.empty());
  EXPECT_TRUE(tls_local_dispatch_key_set().excluded.empty());
}

TEST(LocalDispatchKeySet, IsPerThread) {
  IncludeDispatchKeyGuard here(DK::Tracer);
  bool seen_elsewhere = true;
  std::thread t([&] { seen_elsewhere = tls_is_dispatch_key_included(DK::Tracer); });
  t.join();
  EXPECT_FALSE(seen_elsewhere);
  EXPECT_TRUE(tls_is_dispatch_key_included(DK::Tracer));
}

// ---- Through the dispatcher ------------------------------------------------------------------

TEST(DispatcherTls, IncludeGuardAddsAKeyAndExclusionWins) {
  const OperatorName foo{"test_dispatcher_tls::foo", ""};
  Reg d = def("test_dispatcher_tls::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg tracer = impl(foo, DK::Tracer, tagged("tracer"));
  const LocalDispatchKeySet before = tls_local_dispatch_key_set();
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  {
    IncludeDispatchKeyGuard include(DK::Tracer);
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "tracer");
    EXPECT_EQ(call_boxed(foo, on(DeviceType::CPU)), "tracer");
    {
      ExcludeDispatchKeyGuard exclude(DK::Tracer);
      EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
    }
    EXPECT_EQ(call(foo, on(DeviceType::CPU)), "tracer");
  }
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cpu");
  EXPECT_EQ(tls_local_dispatch_key_set().included, before.included);
  EXPECT_EQ(tls_local_dispatch_key_set().excluded, before.excluded);
}

TEST(DispatcherTls, IncludedMetaWinsOverTheTensorsBackend) {
  const OperatorName foo{"test_dispatcher_tls_meta::foo", ""};
  Reg d = def("test_dispatcher_tls_meta::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg meta = impl(foo, DK::Meta, tagged("meta"));
  IncludeDispatchKeyGuard include(DK::Meta);
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "meta");
}

TEST(DispatcherTls, ExcludingTheBackendLeavesTheCompositeKernel) {
  const OperatorName foo{"test_dispatcher_tls_excl::foo", ""};
  Reg d = def("test_dispatcher_tls_excl::foo(Tensor x) -> Tensor");
  Reg cpu = impl(foo, DK::CPU, tagged("cpu"));
  Reg cuda = impl(foo, DK::CUDA, tagged("cuda"));
  {
    ExcludeDispatchKeyGuard exclude(DK::CPU);
    EXPECT_THROW(call(foo, on(DeviceType::CPU)), Error) << "no key left, no composite kernel";
    EXPECT_EQ(call(foo, on(DeviceType::CUDA)), "cuda");
  }
  Reg cea = impl(foo, DK::CompositeExplicitAutograd, tagged("cea"));
  ExcludeDispatchKeyGuard exclude(DK::CPU);
  EXPECT_EQ(call(foo, on(DeviceType::CPU)), "cea");
}

}  // namespace
}  // namespace opd
