#include "opd/local_dispatch_key_set.h"

#include <gtest/gtest.h>

#include <thread>

namespace opd {
namespace {

using DK = DispatchKey;

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

}  // namespace
}  // namespace opd
