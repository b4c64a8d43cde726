// gradcheck over every differentiable operator of manifests/derivatives.yaml, with broadcasting,
// views, non-contiguous inputs and in-place forms.

#include <gtest/gtest.h>

#include "gradcheck.h"
#include "opd/generator.h"
#include "opd/plugin_manager.h"

namespace opd {
namespace {

using test::gradcheck;
using test::leaf;
using Ts = std::vector<Tensor>;

class OpsGradcheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plugins().load_default();
    manual_seed(0);
  }
};

// A leaf whose values are bounded away from zero (for log, div, abs, sqrt).
Tensor positive(std::vector<int64_t> sizes) { return leaf(sizes, 0.5, 2.0); }

TEST_F(OpsGradcheck, Binary) {
  EXPECT_TRUE(gradcheck([](const Ts& x) { return add(x[0], x[1]); }, {leaf({2, 3}), leaf({3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return add(x[0], x[1], 2.5); }, {leaf({2, 1}), leaf({1, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return add(x[0], 3.0); }, {leaf({4})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return sub(x[0], x[1], -1.5); }, {leaf({2, 3}), leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return sub(x[0], 2.0); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return mul(x[0], x[1]); }, {leaf({2, 3}), leaf({2, 1})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return mul(x[0], 1.5); }, {leaf({3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return div(x[0], x[1]); }, {leaf({2, 3}), positive({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return div(x[0], 4.0); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return pow(x[0], 3); }, {leaf({5})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return pow(x[0], x[1]); }, {positive({2, 2}), leaf({2, 2})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return maximum(x[0], x[1]); }, {leaf({2, 3}), leaf({3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return minimum(x[0], x[1]); }, {leaf({2, 3}), leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return where(gt(x[0], 0), x[0], x[1]); },
                        {leaf({2, 3}), leaf({3})}));
}

TEST_F(OpsGradcheck, Unary) {
  EXPECT_TRUE(gradcheck([](const Ts& x) { return neg(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return abs(x[0]); }, {positive({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return abs(neg(x[0])); }, {positive({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return exp(x[0]); }, {leaf({2, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return log(x[0]); }, {positive({2, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return sqrt(x[0]); }, {positive({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return rsqrt(x[0]); }, {positive({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return sin(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return cos(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return tanh(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return sigmoid(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return relu(x[0]); }, {leaf({6})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return gelu(x[0]); }, {leaf({4})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return gelu(x[0], "tanh"); }, {leaf({4})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return clamp(x[0], -0.5, 0.5); }, {leaf({6})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return clone(x[0]); }, {leaf({3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return _to_copy(x[0], TensorOptions().dtype(kDouble)); },
                        {leaf({3})}));
}

TEST_F(OpsGradcheck, Reductions) {
  EXPECT_TRUE(gradcheck([](const Ts& x) { return sum(x[0]); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return sum(x[0], IntArrayRef{1}); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        return sum(x[0], IntArrayRef{0, 2}, true);
      },
      {leaf({2, 3, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return mean(x[0]); }, {leaf({2, 3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return mean(x[0], IntArrayRef{-1}, true); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return amax(x[0], {1}); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return amin(x[0], {0}, true); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return std::get<0>(max(x[0], 1)); }, {leaf({2, 3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return std::get<0>(max(x[0], 0, true)); }, {leaf({3, 2})}));
}

TEST_F(OpsGradcheck, LinearAlgebra) {
  EXPECT_TRUE(gradcheck([](const Ts& x) { return mm(x[0], x[1]); }, {leaf({2, 3}), leaf({3, 4})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return bmm(x[0], x[1]); }, {leaf({2, 2, 3}), leaf({2, 3, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return addmm(x[0], x[1], x[2], 0.5, 2.0); },
                        {leaf({3}), leaf({2, 4}), leaf({4, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return matmul(x[0], x[1]); }, {leaf({3}), leaf({3, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return linear(x[0], x[1], x[2]); },
                        {leaf({4, 3}), leaf({2, 3}), leaf({2})}));
}

TEST_F(OpsGradcheck, Views) {
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].view({3, 2}); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        return x[0].as_strided({2, 2}, {1, 2}, 1);
      },
      {leaf({6})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].transpose(0, 1); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].t(); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].permute({2, 0, 1}); }, {leaf({2, 3, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].expand({2, 3, 2}); }, {leaf({3, 1})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].squeeze(1); }, {leaf({2, 1, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].unsqueeze(-1); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].slice(1, 1, 5, 2); }, {leaf({2, 5})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].slice(0, -2); }, {leaf({4})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].select(1, -1); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return x[0].reshape({6}); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        return cat({x[0], x[1]}, 1);
      },
      {leaf({2, 1}), leaf({2, 3})}));
}

TEST_F(OpsGradcheck, NonContiguousInputs) {
  Tensor base = rand({3, 2}, TensorOptions().dtype(kDouble));
  Tensor x = base.t();  // a non-contiguous leaf
  x.requires_grad_();
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_TRUE(gradcheck([](const Ts& v) { return mul(v[0], v[0]); }, {x}));
  EXPECT_TRUE(gradcheck([](const Ts& v) { return mm(v[0], v[1]); }, {x, leaf({3, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& v) { return sum(exp(v[0]), IntArrayRef{0}); }, {x}));
}

TEST_F(OpsGradcheck, NeuralNetwork) {
  EXPECT_TRUE(gradcheck([](const Ts& x) { return _softmax(x[0], 1, false); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return _log_softmax(x[0], 0, false); }, {leaf({3, 2})}));
  EXPECT_TRUE(gradcheck([](const Ts& x) { return _log_softmax(x[0], 1, false); }, {leaf({2, 3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return _log_softmax_backward_data(x[0], x[1], 1, kDouble); },
                {leaf({2, 3}), leaf({2, 3})}));
  Tensor target = empty({3}, TensorOptions().dtype(kLong));
  target.data_ptr<int64_t>()[0] = 1;
  target.data_ptr<int64_t>()[1] = 0;
  target.data_ptr<int64_t>()[2] = 2;
  EXPECT_TRUE(
      gradcheck([&](const Ts& x) { return cross_entropy_loss(x[0], target); }, {leaf({3, 3})}));
  EXPECT_TRUE(gradcheck([&](const Ts& x) { return nll_loss(x[0], target, std::nullopt, 2); },
                        {leaf({3, 3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return mse_loss(x[0], x[1]); }, {leaf({2, 3}), leaf({2, 3})}));
  EXPECT_TRUE(
      gradcheck([](const Ts& x) { return mse_loss(x[0], x[1], 0); }, {leaf({3}), leaf({3})}));
}

TEST_F(OpsGradcheck, InPlace) {
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        Tensor t = x[0].clone();
        t.mul_(x[1]);
        return t;
      },
      {leaf({2, 3}), leaf({3})}));
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        Tensor t = x[0] * 1.0;
        t.add_(x[1], 2);
        return t;
      },
      {leaf({3}), leaf({3})}));
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        Tensor t = x[0] * 2.0;
        t.relu_();
        return t;
      },
      {leaf({4})}));
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        Tensor t = zeros_like(x[0]);
        t.copy_(x[0]);
        return t * x[0];
      },
      {leaf({3})}));
  // In place on a view: the base's history becomes CopySlices.
  EXPECT_TRUE(gradcheck(
      [](const Ts& x) {
        Tensor t = x[0].clone();
        t.slice(0, 0, 1).mul_(x[1]);
        return t;
      },
      {leaf({3, 2}), leaf({1, 2})}));
}

}  // namespace
}  // namespace opd
