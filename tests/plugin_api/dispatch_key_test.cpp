#include "opd/dispatch_key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iterator>

#include "opd/error.h"

namespace opd {
namespace {

using ::testing::HasSubstr;

TEST(DispatchKey, NamesRoundTrip) {
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    EXPECT_EQ(parse_dispatch_key(to_string(k)), k) << to_string(k);
  }
  EXPECT_STREQ(to_string(DispatchKey::AutogradCPU), "AutogradCPU");
  EXPECT_STREQ(to_string(DispatchKey::CompositeExplicitAutogradNonFunctional),
               "CompositeExplicitAutogradNonFunctional");
}

TEST(DispatchKey, UnknownNameIsValueErrorNamingIt) {
  try {
    parse_dispatch_key("XLA");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("Unknown dispatch key 'XLA'"));
    EXPECT_THAT(e.msg(), HasSubstr("AutogradCPU"));
  }
  EXPECT_FALSE(try_parse_dispatch_key("").has_value());
}

TEST(DispatchKey, Classification) {
  EXPECT_TRUE(is_backend_key(DispatchKey::CPU));
  EXPECT_TRUE(is_backend_key(DispatchKey::Meta));
  EXPECT_FALSE(is_backend_key(DispatchKey::AutogradCPU));
  EXPECT_TRUE(is_autograd_key(DispatchKey::AutogradPrivateUse1));
  EXPECT_TRUE(is_alias_key(DispatchKey::CompositeImplicitAutograd));
  EXPECT_FALSE(is_alias_key(DispatchKey::Tracer));
  EXPECT_TRUE(is_runtime_key(DispatchKey::Tracer));
  EXPECT_FALSE(is_runtime_key(DispatchKey::Undefined));
  EXPECT_FALSE(is_runtime_key(DispatchKey::Dense));
  EXPECT_TRUE(is_per_backend_functionality_key(DispatchKey::AutogradFunctionality));
}

TEST(DispatchKey, PerBackendRuntimeKeys) {
  EXPECT_EQ(to_runtime_key(DispatchKey::Dense, BackendComponent::CUDA), DispatchKey::CUDA);
  EXPECT_EQ(to_runtime_key(DispatchKey::AutogradFunctionality, BackendComponent::Meta),
            DispatchKey::AutogradMeta);
  EXPECT_EQ(backend_of(DispatchKey::AutogradCUDA), BackendComponent::CUDA);
  EXPECT_EQ(backend_of(DispatchKey::PrivateUse1), BackendComponent::PrivateUse1);
  EXPECT_EQ(backend_key_for(DeviceType::Meta), DispatchKey::Meta);
  EXPECT_EQ(autograd_key_for(BackendComponent::CPU), DispatchKey::AutogradCPU);
}

// PyTorch's relative order (Note [Key layout]): the wrapper layers above the backends, Python
// below Functionalize below ADInplaceOrView below Autograd, PythonTLSSnapshot above everything.
TEST(DispatchKey, WrapperKeysFollowPyTorchsPrecedence) {
  using K = DispatchKey;
  const K ascending[] = {K::CPU,
                         K::CUDA,
                         K::PrivateUse1,
                         K::PrivateUse2,
                         K::PrivateUse3,
                         K::Meta,
                         K::Python,
                         K::Functionalize,
                         K::ADInplaceOrView,
                         K::AutogradCPU,
                         K::AutogradCUDA,
                         K::AutogradPrivateUse1,
                         K::AutogradPrivateUse2,
                         K::AutogradPrivateUse3,
                         K::AutogradMeta,
                         K::Tracer,
                         K::PythonTLSSnapshot};
  static_assert(std::size(ascending) == kNumRuntimeEntries - 1);
  for (size_t i = 0; i < std::size(ascending); ++i) {
    EXPECT_EQ(static_cast<int>(ascending[i]), static_cast<int>(i) + 1) << to_string(ascending[i]);
  }
  for (K k : {K::Python, K::Functionalize, K::PythonTLSSnapshot}) {
    EXPECT_TRUE(is_runtime_key(k));
    EXPECT_FALSE(is_backend_key(k) || is_autograd_key(k) || is_alias_key(k)) << to_string(k);
    EXPECT_EQ(parse_dispatch_key(to_string(k)), k);
  }
  EXPECT_STREQ(to_string(K::PythonTLSSnapshot), "PythonTLSSnapshot");
}

TEST(DispatchKey, EveryVendorSlotIsABackendWithItsAutogradKey) {
  using K = DispatchKey;
  EXPECT_EQ(backend_key_for(DeviceType::PrivateUse2), K::PrivateUse2);
  EXPECT_EQ(backend_key_for(DeviceType::PrivateUse3), K::PrivateUse3);
  EXPECT_EQ(autograd_key_for(BackendComponent::PrivateUse3), K::AutogradPrivateUse3);
  EXPECT_EQ(backend_of(K::AutogradPrivateUse2), BackendComponent::PrivateUse2);
  EXPECT_EQ(privateuse_slot_of(K::PrivateUse3), DeviceType::PrivateUse3);
  EXPECT_EQ(privateuse_slot_of(K::AutogradPrivateUse2), DeviceType::PrivateUse2);
  EXPECT_FALSE(privateuse_slot_of(K::CUDA).has_value());
  EXPECT_FALSE(privateuse_slot_of(K::Python).has_value());
  EXPECT_TRUE(is_privateuse(DeviceType::PrivateUse3));
  EXPECT_FALSE(is_privateuse(DeviceType::Meta));
}

// One test owns the process-wide PrivateUse1 name (gtest runs tests of a binary in one process).
TEST(DispatchKey, PrivateUse1NamedOnceWithErrorsNamingBoth) {
  EXPECT_EQ(privateuse1_backend_name(), "privateuseone");
  try {
    register_privateuse1_backend("cuda");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("cannot name the PrivateUse1 backend 'cuda'"));
    EXPECT_THAT(e.msg(), HasSubstr("built-in device 'cuda'"));
  }
  EXPECT_THROW(register_privateuse1_backend("cpu"), ValueError);
  EXPECT_THROW(register_privateuse1_backend("meta"), ValueError);
  try {
    register_privateuse1_backend("privateusetwo");  // would hide the unnamed PrivateUse2
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("'privateusetwo' is the unnamed PrivateUse2 slot's own name"));
  }
  EXPECT_EQ(privateuse1_backend_name(), "privateuseone");

  register_privateuse1_backend("npu");
  register_privateuse1_backend("npu");  // the same name again is fine
  EXPECT_EQ(privateuse1_backend_name(), "npu");
  try {
    register_privateuse1_backend("xpu");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("already named 'npu'"));
    EXPECT_THAT(e.msg(), HasSubstr("renamed to 'xpu'"));
  }
  EXPECT_EQ(display_name(DispatchKey::PrivateUse1), "NPU");
  EXPECT_EQ(display_name(DispatchKey::AutogradPrivateUse1), "AutogradNPU");
  EXPECT_EQ(display_name(DispatchKey::CPU), "CPU");
  EXPECT_EQ(parse_dispatch_key("AutogradNPU"), DispatchKey::AutogradPrivateUse1);
  EXPECT_EQ(parse_dispatch_key("PrivateUse1"), DispatchKey::PrivateUse1);
}

}  // namespace
}  // namespace opd
