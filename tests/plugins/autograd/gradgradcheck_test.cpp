// Second-order gradients (gradgradcheck) over a representative subset of operators: the
// backward formulas are dispatched operators, so they are differentiated in turn.

#include <gtest/gtest.h>

#include "gradcheck.h"
#include "opd/generator.h"
#include "opd/plugin_manager.h"

namespace opd {
namespace {

using test::gradgradcheck;
using test::leaf;
using Ts = std::vector<Tensor>;

class GradGradcheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plugins().load_default();
    manual_seed(1);
  }
};

TEST_F(GradGradcheck, Pointwise) {
  EXPECT_TRUE(
      gradgradcheck([](const Ts& x) { return mul(x[0], x[1]); }, {leaf({2, 3}), leaf({3})}));
  EXPECT_TRUE(
      gradgradcheck([](const Ts& x) { return div(x[0], x[1]); }, {leaf({3}), leaf({3}, 0.5, 2)}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return exp(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return log(x[0]); }, {leaf({3}, 0.5, 2)}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return tanh(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return sigmoid(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return gelu(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return gelu(x[0], "tanh"); }, {leaf({3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return pow(x[0], 3); }, {leaf({3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return sin(x[0]); }, {leaf({3})}));
}

TEST_F(GradGradcheck, ReductionsAndLinearAlgebra) {
  EXPECT_TRUE(
      gradgradcheck([](const Ts& x) { return sum(x[0] * x[0], IntArrayRef{1}); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return mean(x[0] * x[0]); }, {leaf({2, 3})}));
  EXPECT_TRUE(
      gradgradcheck([](const Ts& x) { return mm(x[0], x[1]); }, {leaf({2, 3}), leaf({3, 2})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return addmm(x[0], x[1], x[2]); },
                            {leaf({2}), leaf({3, 2}), leaf({2, 2})}));
}

TEST_F(GradGradcheck, NeuralNetwork) {
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return _softmax(x[0], 1, false); }, {leaf({2, 3})}));
  EXPECT_TRUE(
      gradgradcheck([](const Ts& x) { return _log_softmax(x[0], 1, false); }, {leaf({2, 3})}));
  EXPECT_TRUE(
      gradgradcheck([](const Ts& x) { return mse_loss(x[0], x[1]); }, {leaf({3}), leaf({3})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return relu(x[0]) * x[0]; }, {leaf({4})}));
}

TEST_F(GradGradcheck, Views) {
  EXPECT_TRUE(
      gradgradcheck([](const Ts& x) { return (x[0] * x[0]).t().select(0, 1); }, {leaf({3, 2})}));
  EXPECT_TRUE(gradgradcheck([](const Ts& x) { return (x[0] * x[0]).slice(0, 1, 3); }, {leaf({4})}));
}

}  // namespace
}  // namespace opd
