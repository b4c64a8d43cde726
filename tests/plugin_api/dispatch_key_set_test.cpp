#include "opd/dispatch_key_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "opd/error.h"

namespace opd {
namespace {

using DK = DispatchKey;

TEST(DispatchKeySet, PrintsLikePyTorch) {
  DispatchKeySet ks = DispatchKeySet(DK::AutogradCPU) | DispatchKeySet(DK::CPU);
  EXPECT_EQ(ks.to_string(), "DispatchKeySet(CPU, AutogradCPU)");
  EXPECT_EQ(DispatchKeySet().to_string(), "DispatchKeySet()");
}

TEST(DispatchKeySet, HighestPriorityKeyAndIndex) {
  EXPECT_EQ(DispatchKeySet().highest_priority_key(), DK::Undefined);
  EXPECT_EQ(DispatchKeySet().index(), 0);
  DispatchKeySet cpu = key_set_for_device(DeviceType::CPU);
  EXPECT_EQ(cpu.highest_priority_key(), DK::AutogradCPU);
  EXPECT_EQ((cpu - kAutogradKeySet).highest_priority_key(), DK::ADInplaceOrView);
  EXPECT_EQ((cpu - kAutogradKeySet - DispatchKeySet(DK::ADInplaceOrView)).highest_priority_key(),
            DK::CPU);
  // Meta outranks the other backends, so Meta in TLS wins.
  EXPECT_EQ((DispatchKeySet(DK::CPU) | DispatchKeySet(DK::Meta)).highest_priority_key(), DK::Meta);
  EXPECT_EQ((DispatchKeySet(DK::CUDA) | DispatchKeySet(DK::AutogradCPU)).highest_priority_key(),
            DK::AutogradCPU);
  for (DK k : kFullKeySet) EXPECT_EQ(DispatchKeySet(k).index(), static_cast<int>(k));
}

TEST(DispatchKeySet, IteratesAscending) {
  std::vector<DK> keys;
  for (DK k : key_set_for_device(DeviceType::CUDA) | DispatchKeySet(DK::Tracer)) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<DK>{DK::CUDA, DK::ADInplaceOrView, DK::AutogradCUDA, DK::Tracer}));
}

TEST(DispatchKeySet, FunctionalityKeysExpandToEveryBackend) {
  EXPECT_EQ(DispatchKeySet(DK::Dense), kBackendKeySet);
  EXPECT_EQ(DispatchKeySet(DK::AutogradFunctionality), kAutogradKeySet);
  EXPECT_TRUE(DispatchKeySet(DK::Dense).has(DK::PrivateUse1));
}

TEST(DispatchKeySet, AliasKeysAreNeverStored) {
  try {
    DispatchKeySet ks(DK::CompositeImplicitAutograd);
    FAIL() << ks.to_string();
  } catch (const ValueError& e) {
    EXPECT_THAT(e.msg(), ::testing::HasSubstr("CompositeImplicitAutograd is an alias key"));
  }
}

TEST(DispatchKeySet, AliasKeysExpandToRuntimeKeys) {
  EXPECT_EQ(runtime_keys_for(DK::Autograd), kAutogradKeySet);
  EXPECT_EQ(runtime_keys_for(DK::CompositeExplicitAutograd), kBackendKeySet);
  EXPECT_EQ(runtime_keys_for(DK::CompositeExplicitAutogradNonFunctional), kBackendKeySet);
  EXPECT_EQ(runtime_keys_for(DK::CompositeImplicitAutograd), kBackendKeySet | kAutogradKeySet);
  EXPECT_EQ(runtime_keys_for(DK::Tracer), DispatchKeySet(DK::Tracer));
  EXPECT_TRUE(runtime_keys_for(DK::Undefined).empty());
}

TEST(DispatchKeySet, SetAlgebra) {
  DispatchKeySet a = DispatchKeySet(DK::CPU) | DispatchKeySet(DK::Tracer);
  DispatchKeySet b = DispatchKeySet(DK::Tracer) | DispatchKeySet(DK::Meta);
  EXPECT_EQ(a & b, DispatchKeySet(DK::Tracer));
  EXPECT_EQ(a - b, DispatchKeySet(DK::CPU));
  EXPECT_TRUE((a | b).is_superset_of(a));
  EXPECT_TRUE(a.has_any(b));
  EXPECT_EQ(a.remove(DK::CPU), DispatchKeySet(DK::Tracer));
  EXPECT_EQ(keys_below(DK::Python), kBackendKeySet);
  EXPECT_EQ(keys_below(DK::ADInplaceOrView),
            kBackendKeySet | DispatchKeySet(DK::Python) | DispatchKeySet(DK::Functionalize));
}

TEST(DispatchKeySet, TensorKeySetCarriesAutogradAndInplaceKeys) {
  EXPECT_EQ(key_set_for_device(DeviceType::Meta).to_string(),
            "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)");
}

}  // namespace
}  // namespace opd
