// A vendor's operators with gradients from code generation (#15 §4/§5): the vendor example of
// tests/vendor_plugin, built in the tree by opd_add_plugin(... NATIVE_FUNCTIONS ... DERIVATIVES
// ...). acme::scale and acme::axpy get their Autograd kernels from acme_derivatives.yaml (an
// opd::autograd::Function each, tools/gen/emit_vendor_autograd.cpp), acme::softsign from a
// hand-written Function. Gradients and second derivatives against finite differences, partial
// needs_input_grad, Meta tensors, the typed API while the plugin is not loaded, and the graph
// keeping the vendor's plugin mapped.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acme/ops.h"
#include "gradcheck.h"
#include "opd/autograd.h"
#include "opd/generator.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::is_mapped;
using fixtures::manifest;
using fixtures::plugin_dir;
using fixtures::wait_for_state;
using test::leaf;
using ::testing::HasSubstr;

class VendorAutograd : public ::testing::Test {
 protected:
  void SetUp() override {
    plugins().load_default();
    manual_seed(0);
    ASSERT_EQ(plugins().load(manifest("acme")).state, PluginState::Loaded);
  }
  void TearDown() override {
    if (plugins().status("acme").state == PluginState::Loaded) plugins().unload("acme");
  }
};

TEST_F(VendorAutograd, FormulasFromTheDerivativesYamlMatchFiniteDifferences) {
  Tensor x = leaf({2, 3}), y = leaf({2, 3});
  EXPECT_TRUE(test::gradcheck([](const auto& in) { return acme::scale(in[0], -1.75); }, {x}));
  EXPECT_TRUE(test::gradgradcheck([](const auto& in) { return acme::scale(in[0], 3.0); }, {x}));
  EXPECT_TRUE(
      test::gradcheck([](const auto& in) { return acme::axpy(0.5, in[0], in[1]); }, {x, y}));
  EXPECT_TRUE(
      test::gradgradcheck([](const auto& in) { return acme::axpy(2.0, in[0], in[1]); }, {x, y}));
  EXPECT_EQ(autograd::grad_fn_name(acme::scale(x, 2.0)), "CppNode<acme::autograd::ScaleBackward0>");
}

TEST_F(VendorAutograd, AHandWrittenFunctionMatchesFiniteDifferences) {
  Tensor x = leaf({4}, 0.2, 2.0);
  EXPECT_TRUE(test::gradcheck([](const auto& in) { return acme::softsign(in[0]); }, {x}));
  EXPECT_TRUE(test::gradgradcheck([](const auto& in) { return acme::softsign(in[0]); }, {x}));
}

TEST_F(VendorAutograd, OnlyTheInputsThatRequireGradGetOne) {
  Tensor x = ones({3}, TensorOptions().dtype(kDouble));
  Tensor y = ones({3}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  acme::axpy(4.0, x, y).sum().backward();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_EQ(y.grad().sum().item<double>(), 3.0);
  // Without grad, no history.
  Tensor z = acme::scale(x, 2.0);
  EXPECT_FALSE(z.requires_grad());
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(acme::scale(y, 2.0).requires_grad());
  }
}

TEST_F(VendorAutograd, TheYamlsTagsReachTheDefinitions) {
  OperatorHandle softsign = find_operator_or_throw("acme::softsign");
  EXPECT_EQ(softsign.tags(), (TagSet{Tag::pointwise, Tag::core}));
  EXPECT_THAT(softsign.dump_state(), HasSubstr("\ntags: core, pointwise\n"));
  EXPECT_TRUE(find_operator_or_throw("acme::scale").tags().empty());
}

TEST_F(VendorAutograd, MetaTensorsGetShapesAndHistory) {
  Tensor x = empty({2, 5}, TensorOptions().device("meta").dtype(kDouble)).requires_grad_(true);
  Tensor y = acme::scale(x, 2.0);
  EXPECT_EQ(y.device().type, DeviceType::Meta);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 5}));
  EXPECT_TRUE(y.requires_grad());
}

TEST_F(VendorAutograd, TheTypedApiSaysWhenThePluginIsNotLoaded) {
  ASSERT_EQ(plugins().unload("acme").state, PluginState::Unloaded);
  try {
    acme::scale(ones({1}), 2.0);
    ADD_FAILURE() << "acme::scale ran without its plugin";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("Could not find schema for acme::scale"));
  }
  // And follows it when it comes back.
  ASSERT_EQ(plugins().load(manifest("acme")).state, PluginState::Loaded);
  EXPECT_EQ(acme::scale(ones({1}), 2.0).item<double>(), 2.0);
}

TEST_F(VendorAutograd, TheGraphKeepsTheVendorPluginMappedUntilItIsGone) {
  const std::string library = (plugin_dir() / "acme").string();
  ASSERT_TRUE(is_mapped(library));
  Tensor x = ones({2}, TensorOptions().dtype(kDouble)).requires_grad_(true);
  {
    Tensor y = acme::scale(x, 3.0);
    PluginStatus s = plugins().unload("acme");
    EXPECT_EQ(s.state, PluginState::Unloading) << s.reason;
    EXPECT_TRUE(is_mapped(library));
    // The node's backward is the generated code in the vendor's library.
    y.sum().backward();
    EXPECT_EQ(x.grad().sum().item<double>(), 6.0);
  }
  EXPECT_EQ(wait_for_state("acme", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(library));
}

}  // namespace
}  // namespace opd
