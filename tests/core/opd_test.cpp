// The umbrella header (core/include/opd/opd.h) alone is enough for a host program: load the
// default plugins, compute, differentiate, look an operator up.

#include "opd/opd.h"

#include <gtest/gtest.h>

namespace opd {
namespace {

TEST(UmbrellaHeader, IsEnoughForAHostProgram) {
  for (const PluginStatus& s : plugins().load_default()) {
    if (s.name == "cpu" || s.name == "autograd") {
      ASSERT_EQ(s.state, PluginState::Loaded) << s.name << ": " << s.reason;
    }
  }
  Tensor w = ones({3}).requires_grad_();
  Tensor loss = (w * 2).sum();
  loss.backward();
  EXPECT_EQ(w.grad().sum().item<float>(), 6.0f);
  OperatorHandle add = Dispatcher::singleton().find_schema_or_throw("aten::add", "Tensor");
  EXPECT_EQ(add.schema().to_string(),
            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_FALSE(std::string(OPD_VERSION).empty());
}

}  // namespace
}  // namespace opd
