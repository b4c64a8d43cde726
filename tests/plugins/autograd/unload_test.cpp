// Unloading the autograd plugin while a graph is alive (issue #5 §2): its kernels go at once,
// the graph keeps the library mapped, and the library leaves the process with the last node.
// The same for a vendor plugin whose operator's gradient is a custom Function (#15 §1): the
// graph's node runs the vendor's backward code.

#include <gtest/gtest.h>

#include "opd/autograd.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::is_mapped;
using fixtures::manifest;
using fixtures::plugin_dir;
using fixtures::wait_for_state;

const char* const kLibrary = OPD_AUTOGRAD_PLUGIN_LIBRARY;

TEST(AutogradUnload, TheGraphKeepsThePluginMappedUntilItsLastNode) {
  plugins().load_default();
  ASSERT_EQ(plugins().status("autograd").state, PluginState::Loaded);
  ASSERT_TRUE(is_mapped(kLibrary));
  {
    Tensor x = ones({3}).requires_grad_(true);
    Tensor y = (x * 2).sum();
    EXPECT_EQ(autograd::grad_fn_name(y), "SumBackward0");

    PluginStatus s = plugins().unload("autograd");
    EXPECT_EQ(s.state, PluginState::Unloading) << s.reason;
    // Deregistered at once: new operations record nothing and the API has no kernel.
    EXPECT_TRUE(is_mapped(kLibrary));
    Tensor z = ones({3}) * 3;
    EXPECT_EQ(z.sum().item<double>(), 9.0);
    EXPECT_THROW(y.backward(), NotImplementedError);
    EXPECT_TRUE(is_mapped(kLibrary));
  }
  // x and y, and with them the nodes and the autograd state, are gone.
  EXPECT_EQ(wait_for_state("autograd", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(kLibrary));

  // Loading it again works: gradients flow as before.
  ASSERT_EQ(plugins().load("autograd").state, PluginState::Loaded);
  Tensor x = ones({3}).requires_grad_(true);
  (x * 2).sum().backward();
  EXPECT_EQ(x.grad().sum().item<double>(), 6.0);
}

TEST(AutogradUnload, AGraphOfCustomNodesKeepsTheVendorPluginMapped) {
  plugins().load_default();
  ASSERT_EQ(plugins().load(manifest("fnplug")).state, PluginState::Loaded);
  const std::string library = (plugin_dir() / "fnplug").string();
  ASSERT_TRUE(is_mapped(library));
  Tensor x = ones({2}).requires_grad_(true);
  {
    Tensor y = find_operator_or_throw("fnplug::scale", "").call_as<Tensor>(x, 3.0);
    EXPECT_EQ(autograd::grad_fn_name(y), "CppNode<(anonymous namespace)::Scale>");
    PluginStatus s = plugins().unload("fnplug");
    EXPECT_EQ(s.state, PluginState::Unloading) << s.reason;
    EXPECT_TRUE(is_mapped(library));
    // The node's backward is the vendor's code, still mapped.
    y.sum().backward();
    EXPECT_EQ(x.grad().sum().item<double>(), 6.0);
  }
  EXPECT_EQ(wait_for_state("fnplug", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(library));
}

}  // namespace
}  // namespace opd
