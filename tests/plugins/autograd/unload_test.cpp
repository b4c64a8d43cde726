// Unloading the autograd plugin while a graph is alive (issue #5 §2): its kernels go at once,
// the graph keeps the library mapped, and the library leaves the process with the last node.

#include <gtest/gtest.h>

#include "opd/autograd.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::is_mapped;
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

}  // namespace
}  // namespace opd
