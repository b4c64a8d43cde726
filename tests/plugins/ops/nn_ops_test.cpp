// Neural-network operators against PyTorch 1.13: softmax and log_softmax, the losses (nll_loss,
// cross_entropy_loss, mse_loss) and the backward kernels. Forward values are worked out from
// their definitions; each backward kernel is checked against central differences of its forward
// operator in Double.

#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <typeinfo>

#include "op_test_util.h"

namespace opd::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kNone = 0, kMean = 1, kSum = 2;  // at::Reduction

using test::error_of_type;

// log(softmax(row)), in Double, by its definition shifted by the maximum.
std::vector<double> log_softmax_of(const std::vector<double>& row) {
  double m = -kInf;
  for (double v : row) m = std::max(m, v);
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  std::vector<double> out;
  for (double v : row) out.push_back(v - m - std::log(s));
  return out;
}

class NnOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { load_default_plugins(); }
  Tensor in(const std::vector<double>& v, std::vector<int64_t> sizes,
            ScalarType dt = kFloat) const {
    return tensor(v, std::move(sizes), dt, GetParam());
  }
  static Tensor ex(const std::vector<double>& v, std::vector<int64_t> sizes,
                   ScalarType dt = kFloat) {
    return tensor(v, std::move(sizes), dt);
  }

  // The gradient of sum(g * f(x)) with respect to x, by central differences in Double.
  std::vector<double> numeric_grad(const std::function<Tensor(const Tensor&)>& f,
                                   const std::vector<double>& x, const std::vector<int64_t>& sizes,
                                   const std::vector<double>& g) const {
    const double h = 1e-6;
    auto loss = [&](const std::vector<double>& at) {
      std::vector<double> y = values(f(in(at, sizes, kDouble)));
      EXPECT_EQ(y.size(), g.size());
      double s = 0;
      for (size_t i = 0; i < y.size() && i < g.size(); ++i) s += g[i] * y[i];
      return s;
    };
    std::vector<double> grad(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      std::vector<double> up = x, down = x;
      up[i] += h;
      down[i] -= h;
      grad[i] = (loss(up) - loss(down)) / (2 * h);
    }
    return grad;
  }
};

// Inputs shared by the loss tests: log-probabilities (any values do for nll_loss), logits, a
// target per row, and class weights.
const std::vector<double> kLogProbs = {-1.0, -2.0, -0.5, -3.0, -0.2, -1.5,
                                       -2.5, -0.7, -1.1, -0.3, -0.9, -2.2};
const std::vector<double> kLogits = {1, 2, 3, 4, 2, 1, 0, -1, 0.5, 0.5, 0.5, 0.5};
const std::vector<double> kWeights = {0.5, 2, 1, 3};

// ---- softmax ------------------------------------------------------------------------------------

TEST_P(NnOps, SoftmaxRowsMatchTheDefinitionAndSumToOne) {
  std::vector<double> x = {1, 2, 3, -1, 0, 0.5};
  std::vector<double> expected;
  for (int r = 0; r < 2; ++r) {
    auto lp = log_softmax_of({x[3 * r], x[3 * r + 1], x[3 * r + 2]});
    for (double v : lp) expected.push_back(std::exp(v));
  }
  Tensor s = opd::_softmax(in(x, {2, 3}), 1, false);
  EXPECT_TRUE(tensors_equal(s, ex(expected, {2, 3})));
  EXPECT_TRUE(tensors_equal(opd::sum(s, {1}, false), ex({1, 1}, {2})));
  EXPECT_TRUE(tensors_equal(opd::softmax(in(x, {2, 3}), -1), ex(expected, {2, 3})));
  EXPECT_TRUE(
      tensors_equal(in(x, {2, 3}, kDouble).softmax(1), ex(expected, {2, 3}, kDouble), 1e-12));
}

TEST_P(NnOps, LogSoftmaxMatchesTheDefinition) {
  std::vector<double> x = {1, 2, 3, -1, 0, 0.5};
  std::vector<double> expected;
  for (int r = 0; r < 2; ++r) {
    for (double v : log_softmax_of({x[3 * r], x[3 * r + 1], x[3 * r + 2]})) expected.push_back(v);
  }
  EXPECT_TRUE(tensors_equal(opd::_log_softmax(in(x, {2, 3}), 1, false), ex(expected, {2, 3})));
  EXPECT_TRUE(tensors_equal(opd::log_softmax(in(x, {2, 3}), 1), ex(expected, {2, 3})));
  EXPECT_TRUE(tensors_equal(in(x, {2, 3}).log_softmax(-1, kDouble), ex(expected, {2, 3}, kDouble)));
}

TEST_P(NnOps, SoftmaxOverOtherDimsAndNonContiguousInputs) {
  // Columns of [[1, 2], [3, 5]]: softmax over dim 0.
  double a = std::exp(-2.0) / (1 + std::exp(-2.0)), b = std::exp(-3.0) / (1 + std::exp(-3.0));
  Tensor x = in({1, 2, 3, 5}, {2, 2});
  EXPECT_TRUE(tensors_equal(opd::_softmax(x, 0, false), ex({a, b, 1 - a, 1 - b}, {2, 2})));
  EXPECT_TRUE(tensors_equal(opd::softmax(x, -2), ex({a, b, 1 - a, 1 - b}, {2, 2})));
  // x.t() = [[1, 3], [2, 5]]: rows of the transposed view are the columns above.
  EXPECT_TRUE(tensors_equal(opd::_softmax(x.t(), 1, false), ex({a, 1 - a, b, 1 - b}, {2, 2})));
  // The middle dim of a [2, 2, 1] tensor: pairs (1, 3) and (2, 5) again.
  EXPECT_TRUE(
      tensors_equal(opd::_log_softmax(in({1, 3, 2, 5}, {2, 2, 1}), 1, false),
                    ex({std::log(a), std::log(1 - a), std::log(b), std::log(1 - b)}, {2, 2, 1})));
}

TEST_P(NnOps, SoftmaxIsStableForLargeInputs) {
  auto lp = log_softmax_of({0, 1, 2});
  std::vector<double> p = {std::exp(lp[0]), std::exp(lp[1]), std::exp(lp[2])};
  EXPECT_TRUE(tensors_equal(opd::_softmax(in({1000, 1001, 1002}, {3}), 0, false), ex(p, {3})));
  EXPECT_TRUE(tensors_equal(opd::_softmax(in({-1000, -999, -998}, {3}), 0, false), ex(p, {3})));
  EXPECT_TRUE(tensors_equal(opd::_log_softmax(in({1000, 1000}, {2}), 0, false),
                            ex({-std::log(2.0), -std::log(2.0)}, {2})));
  EXPECT_TRUE(tensors_equal(opd::_log_softmax(in({1000, 1001, 1002}, {3}, kDouble), 0, false),
                            ex(lp, {3}, kDouble), 1e-12));
}

TEST_P(NnOps, SoftmaxWithInfinities) {
  EXPECT_TRUE(tensors_equal(opd::_log_softmax(in({-kInf, 0}, {2}), 0, false), ex({-kInf, 0}, {2})));
  EXPECT_TRUE(tensors_equal(opd::_softmax(in({-kInf, 0}, {2}), 0, false), ex({0, 1}, {2})));
  EXPECT_TRUE(
      tensors_equal(opd::_softmax(in({-kInf, -kInf}, {2}), 0, false), ex({kNaN, kNaN}, {2})));
}

TEST_P(NnOps, SoftmaxOfZeroDimAndEmptyTensors) {
  EXPECT_TRUE(tensors_equal(opd::_softmax(in({3}, {}), 0, false), ex({1}, {})));
  EXPECT_TRUE(tensors_equal(opd::_log_softmax(in({3}, {}), -1, false), ex({0}, {})));
  Tensor e = opd::empty({0, 3}, TensorOptions().device(GetParam()));
  EXPECT_TRUE(tensors_equal(opd::_softmax(e, 1, false), ex({}, {0, 3})));
  EXPECT_TRUE(tensors_equal(opd::_log_softmax(e, 0, false), ex({}, {0, 3})));
}

TEST_P(NnOps, SoftmaxIntWithDtypeConvertsFirst) {
  EXPECT_TRUE(tensors_equal(opd::softmax(in({1, 1}, {2}, kLong), 0, kFloat), ex({0.5, 0.5}, {2})));
  EXPECT_TRUE(tensors_equal(opd::log_softmax(in({1, 1}, {2}, kLong), 0, kDouble),
                            ex({-std::log(2.0), -std::log(2.0)}, {2}, kDouble)));
}

TEST_P(NnOps, SoftmaxErrors) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::_softmax(x, 2, false); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::log_softmax(x, -3); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
  std::string msg = error_of_type<Error>([&] { opd::_softmax(in({1, 2}, {2}, kLong), 0, false); });
  EXPECT_THAT(msg, ::testing::HasSubstr("softmax"));
  EXPECT_THAT(msg, ::testing::HasSubstr("Long"));
  msg = error_of_type<Error>([&] { opd::log_softmax(in({1, 2}, {2}, kLong), 0); });
  EXPECT_THAT(msg, ::testing::HasSubstr("log_softmax"));
  EXPECT_THAT(msg, ::testing::HasSubstr("Long"));
  if (GetParam().is_cpu()) {
    EXPECT_EQ(error_of_type<Error>([&] { opd::_softmax(x, 1, true); }),
              "softmax with half to float conversion is not supported on CPU");
  }
}

// The out= forms (structured: _softmax.out, _log_softmax.out and their backward's) write what the
// functional forms return, into a contiguous or a transposed out.
TEST_P(NnOps, SoftmaxOutFormsWriteWhatTheFunctionalFormsReturn) {
  Tensor x = in({1, 2, 3, 4, 6, 8}, {2, 3});
  Tensor out = in({0, 0, 0, 0, 0, 0}, {2, 3});
  EXPECT_EQ(&opd::_softmax_out(out, x, 1, false), &out);
  EXPECT_TRUE(tensors_equal(out, opd::_softmax(x, 1, false)));
  Tensor base = in({0, 0, 0, 0, 0, 0}, {3, 2});
  Tensor target = base.t();
  opd::_log_softmax_outf(x, 0, false, target);
  EXPECT_TRUE(tensors_equal(target, opd::_log_softmax(x, 0, false)));
  Tensor y = opd::_softmax(x, 1, false);
  Tensor g = in({1, -1, 2, 0.5, 0, 3}, {2, 3});
  Tensor grad_input = in({}, {0});
  opd::_softmax_backward_data_out(grad_input, g, y, 1, kFloat);
  EXPECT_TRUE(tensors_equal(grad_input, opd::_softmax_backward_data(g, y, 1, kFloat)));
  opd::_log_softmax_backward_data_outf(g, y, 1, kFloat, out);
  EXPECT_TRUE(tensors_equal(out, opd::_log_softmax_backward_data(g, y, 1, kFloat)));
  Tensor d = in({0, 0, 0, 0, 0, 0}, {2, 3}, kDouble);
  EXPECT_EQ(error_of([&] { opd::_softmax_out(d, x, 1, false); }),
            "Expected out tensor to have dtype float, but got double instead");
}

// ---- nll_loss -----------------------------------------------------------------------------------

TEST_P(NnOps, NllLossReductions) {
  Tensor x = in(kLogProbs, {3, 4});
  Tensor t = in({1, 0, 3}, {3}, kLong);
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, std::nullopt, kNone), ex({2.0, 0.2, 2.2}, {3})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, std::nullopt, kSum), ex({4.4}, {})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t), ex({4.4 / 3}, {})));
  Tensor w = in(kWeights, {4});
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, w, kNone), ex({4.0, 0.1, 6.6}, {3})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, w, kSum), ex({10.7}, {})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, w, kMean), ex({10.7 / 5.5}, {})));
  EXPECT_TRUE(
      tensors_equal(opd::nll_loss(in(kLogProbs, {3, 4}, kDouble), t, in(kWeights, {4}, kDouble)),
                    ex({10.7 / 5.5}, {}, kDouble)));
}

TEST_P(NnOps, NllLossForwardReturnsTheTotalWeight) {
  Tensor x = in(kLogProbs, {3, 4});
  Tensor t = in({1, 0, 3}, {3}, kLong);
  auto [mean, mean_total] = opd::nll_loss_forward(x, t, std::nullopt, kMean, -100);
  EXPECT_TRUE(tensors_equal(mean, ex({4.4 / 3}, {})));
  EXPECT_TRUE(tensors_equal(mean_total, ex({3}, {})));
  auto [sum, sum_total] = opd::nll_loss_forward(x, t, in(kWeights, {4}), kSum, -100);
  EXPECT_TRUE(tensors_equal(sum, ex({10.7}, {})));
  EXPECT_TRUE(tensors_equal(sum_total, ex({5.5}, {})));
  auto [none, none_total] = opd::nll_loss_forward(x, t, std::nullopt, kNone, -100);
  EXPECT_TRUE(tensors_equal(none, ex({2.0, 0.2, 2.2}, {3})));
  EXPECT_TRUE(tensors_equal(none_total, ex({0}, {})));
}

TEST_P(NnOps, NllLossIgnoresTheIgnoreIndex) {
  Tensor x = in(kLogProbs, {3, 4});
  Tensor t = in({1, -100, 3}, {3}, kLong);
  Tensor w = in(kWeights, {4});
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, std::nullopt, kNone), ex({2.0, 0, 2.2}, {3})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, std::nullopt, kSum), ex({4.2}, {})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t), ex({2.1}, {})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, t, w, kMean), ex({10.6 / 5}, {})));
  // Any class can be the ignored one.
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, in({1, 0, 3}, {3}, kLong), std::nullopt, kNone, 0),
                            ex({2.0, 0, 2.2}, {3})));
  // Nothing left: the mean is 0/0, the sum 0.
  Tensor all = in({-100, -100, -100}, {3}, kLong);
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, all), ex({kNaN}, {})));
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, all, std::nullopt, kSum), ex({0}, {})));
}

TEST_P(NnOps, NllLossOfOneSampleWithoutBatchDim) {
  Tensor x = in({-1.0, -2.0, -0.5, -3.0}, {4});
  EXPECT_TRUE(tensors_equal(opd::nll_loss(x, in({2}, {}, kLong)), ex({0.5}, {})));
  EXPECT_TRUE(
      tensors_equal(opd::nll_loss(x, in({2}, {}, kLong), std::nullopt, kNone), ex({0.5}, {})));
}

TEST_P(NnOps, NllLossErrors) {
  Tensor x = in(kLogProbs, {3, 4});
  EXPECT_EQ(error_of_type<IndexError>([&] {
              opd::nll_loss(x, in({1, 0, 4}, {3}, kLong));
            }),
            "Target 4 is out of bounds.");
  EXPECT_EQ(error_of_type<IndexError>([&] {
              opd::nll_loss(x, in({1, 0, -1}, {3}, kLong), std::nullopt, kNone);
            }),
            "Target -1 is out of bounds.");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::nll_loss(x, in({1, 0, 2}, {3}));
            }),
            "expected scalar type Long but found Float");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::nll_loss(x, in({1, 0}, {2}, kLong));
            }),
            "size mismatch (got input: [3, 4], target: [2])");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::nll_loss(x, in({1, 0, 2}, {1, 3}, kLong));
            }),
            "0D or 1D target tensor expected, multi-target not supported");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::nll_loss(in(kLogProbs, {3, 2, 2}), in({1, 0}, {2}, kLong));
            }),
            "input tensor should be 1D or 2D");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::nll_loss(x, in({1, 0, 2}, {3}, kLong), in({1, 1, 1}, {3}));
            }),
            "weight tensor should be defined either for all 4 classes or no classes but got weight "
            "tensor of shape: [3]");
}

// ---- cross_entropy_loss -------------------------------------------------------------------------

// PyTorch 1.13's cross_entropy with class-index targets (aten/src/ATen/native/LossNLL.cpp):
// (1 - eps) * nll_loss(log_softmax(x)) + eps / C * smooth, where smooth_i = -sum_c w_c lp_ic
// (0 where the target is ignored), summed for Sum and divided by the total weight of the
// non-ignored targets for Mean.
std::vector<double> cross_entropy_reference(const std::vector<int64_t>& target, bool weighted,
                                            int64_t reduction, double eps) {
  const int64_t n = 3, c = 4;
  std::vector<double> nll(n, 0.0), smooth(n, 0.0);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (target[i] == -100) continue;
    auto lp = log_softmax_of({kLogits.begin() + i * c, kLogits.begin() + (i + 1) * c});
    double wt = weighted ? kWeights[target[i]] : 1.0;
    nll[i] = -wt * lp[target[i]];
    for (int64_t k = 0; k < c; ++k) smooth[i] -= (weighted ? kWeights[k] : 1.0) * lp[k];
    total += wt;
  }
  std::vector<double> per(n);
  double sum_nll = 0, sum_smooth = 0;
  for (int64_t i = 0; i < n; ++i) {
    per[i] = (1 - eps) * nll[i] + eps / c * smooth[i];
    sum_nll += nll[i];
    sum_smooth += smooth[i];
  }
  if (reduction == kNone) return per;
  if (reduction == kSum) return {(1 - eps) * sum_nll + eps / c * sum_smooth};
  return {(1 - eps) * sum_nll / total + eps / c * sum_smooth / total};
}

TEST_P(NnOps, CrossEntropyIsLogSoftmaxThenNllLoss) {
  Tensor x = in(kLogits, {3, 4}, kDouble);
  Tensor w = in(kWeights, {4}, kDouble);
  for (std::vector<int64_t> t : {std::vector<int64_t>{1, 0, 3}, std::vector<int64_t>{1, -100, 3}}) {
    Tensor target = in({double(t[0]), double(t[1]), double(t[2])}, {3}, kLong);
    for (int64_t red : {kNone, kMean, kSum}) {
      for (bool weighted : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "reduction " << red << (weighted ? " weighted" : "")
                                          << " target[1] " << t[1]);
        std::optional<Tensor> wopt = weighted ? std::optional<Tensor>(w) : std::nullopt;
        Tensor got = opd::cross_entropy_loss(x, target, wopt, red);
        EXPECT_TRUE(tensors_equal(got, opd::nll_loss(opd::log_softmax(x, 1), target, wopt, red)));
        std::vector<int64_t> shape =
            red == kNone ? std::vector<int64_t>{3} : std::vector<int64_t>{};
        EXPECT_TRUE(
            tensors_equal(got, ex(cross_entropy_reference(t, weighted, red, 0), shape, kDouble)));
      }
    }
  }
  // Float in, Float out.
  Tensor f = opd::cross_entropy_loss(in(kLogits, {3, 4}), in({1, 0, 3}, {3}, kLong));
  EXPECT_TRUE(tensors_equal(f, ex(cross_entropy_reference({1, 0, 3}, false, kMean, 0), {})));
}

TEST_P(NnOps, CrossEntropyWithLabelSmoothing) {
  Tensor x = in(kLogits, {3, 4}, kDouble);
  Tensor w = in(kWeights, {4}, kDouble);
  for (std::vector<int64_t> t : {std::vector<int64_t>{1, 0, 3}, std::vector<int64_t>{1, -100, 3}}) {
    Tensor target = in({double(t[0]), double(t[1]), double(t[2])}, {3}, kLong);
    for (int64_t red : {kNone, kMean, kSum}) {
      for (bool weighted : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "reduction " << red << (weighted ? " weighted" : "")
                                          << " target[1] " << t[1]);
        std::optional<Tensor> wopt = weighted ? std::optional<Tensor>(w) : std::nullopt;
        std::vector<int64_t> shape =
            red == kNone ? std::vector<int64_t>{3} : std::vector<int64_t>{};
        EXPECT_TRUE(
            tensors_equal(opd::cross_entropy_loss(x, target, wopt, red, -100, 0.1),
                          ex(cross_entropy_reference(t, weighted, red, 0.1), shape, kDouble)));
      }
    }
  }
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::cross_entropy_loss(x, in({1, 0, 3}, {3}, kLong), std::nullopt, kMean, -100, 1.5);
            }),
            "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
}

TEST_P(NnOps, CrossEntropyWithClassProbabilities) {
  // Target probabilities of the same shape as the input: -sum_c w_c p_ic lp_ic per row, the mean
  // over rows; label smoothing mixes p with the uniform distribution.
  const std::vector<double> logits = {1, 2, 3, 1, 0, 0}, probs = {0.2, 0.3, 0.5, 1, 0, 0};
  const std::vector<double> w = {1, 2, 0.5};
  auto reference = [&](bool weighted, int64_t red, double eps) {
    std::vector<double> per;
    for (int i = 0; i < 2; ++i) {
      auto lp = log_softmax_of({logits.begin() + 3 * i, logits.begin() + 3 * i + 3});
      double s = 0;
      for (int k = 0; k < 3; ++k)
        s -= (weighted ? w[k] : 1.0) * ((1 - eps) * probs[3 * i + k] + eps / 3) * lp[k];
      per.push_back(s);
    }
    if (red == kNone) return per;
    return std::vector<double>{red == kSum ? per[0] + per[1] : (per[0] + per[1]) / 2};
  };
  Tensor x = in(logits, {2, 3}, kDouble), p = in(probs, {2, 3}, kDouble);
  for (int64_t red : {kNone, kMean, kSum}) {
    for (bool weighted : {false, true}) {
      for (double eps : {0.0, 0.2}) {
        SCOPED_TRACE(::testing::Message()
                     << "reduction " << red << (weighted ? " weighted" : "") << " eps " << eps);
        std::optional<Tensor> wopt =
            weighted ? std::optional<Tensor>(in(w, {3}, kDouble)) : std::nullopt;
        std::vector<int64_t> shape =
            red == kNone ? std::vector<int64_t>{2} : std::vector<int64_t>{};
        EXPECT_TRUE(tensors_equal(opd::cross_entropy_loss(x, p, wopt, red, -100, eps),
                                  ex(reference(weighted, red, eps), shape, kDouble)));
      }
    }
  }
}

// ---- mse_loss -----------------------------------------------------------------------------------

TEST_P(NnOps, MseLossReductions) {
  Tensor a = in({1, 2, 3, 4}, {2, 2}), b = in({0, 2, 5, 1}, {2, 2});  // squared errors 1, 0, 4, 9
  EXPECT_TRUE(tensors_equal(opd::mse_loss(a, b, kNone), ex({1, 0, 4, 9}, {2, 2})));
  EXPECT_TRUE(tensors_equal(opd::mse_loss(a, b, kSum), ex({14}, {})));
  EXPECT_TRUE(tensors_equal(opd::mse_loss(a, b), ex({3.5}, {})));
  EXPECT_TRUE(tensors_equal(opd::mse_loss(a.t(), b.t(), kNone), ex({1, 4, 0, 9}, {2, 2})));
  // The target broadcasts, and mixed dtypes promote.
  EXPECT_TRUE(tensors_equal(opd::mse_loss(a, in({1, 1}, {2}), kSum), ex({14}, {})));
  EXPECT_TRUE(tensors_equal(opd::mse_loss(a, in({0, 2, 5, 1}, {2, 2}, kLong)), ex({3.5}, {})));
  EXPECT_TRUE(tensors_equal(opd::mse_loss(a.to(kDouble), b.to(kDouble)), ex({3.5}, {}, kDouble)));
}

TEST_P(NnOps, MseLossErrors) {
  EXPECT_EQ(
      error_of_type<Error>([&] {
        opd::mse_loss(in({1, 2, 3, 4}, {2, 2}), in({1, 2, 3, 4}, {4, 1}));
      }),
      "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0");
  std::string msg = error_of_type<Error>([&] {
    opd::mse_loss(in({1, 2}, {2}, kLong), in({1, 2}, {2}, kLong));
  });
  EXPECT_THAT(msg, ::testing::HasSubstr("mse"));
  EXPECT_THAT(msg, ::testing::HasSubstr("Long"));
}

// ---- backward kernels against finite differences -----------------------------------------------

const std::vector<double> kPoints = {-1.5, -0.3, 0.4, 2.0, -2.2, 0.7};  // none near a kink
const std::vector<double> kGrads = {0.3, -1.2, 2.0, 0.5, -0.7, 1.1};

TEST_P(NnOps, ThresholdBackwardIsTheDerivativeOfRelu) {
  Tensor x = in(kPoints, {2, 3}, kDouble), g = in(kGrads, {2, 3}, kDouble);
  auto numeric =
      numeric_grad([](const Tensor& t) { return opd::relu(t); }, kPoints, {2, 3}, kGrads);
  EXPECT_TRUE(tensors_equal(opd::threshold_backward(g, x, 0), ex(numeric, {2, 3}, kDouble)));
  // At or below the threshold the gradient is 0 (x <= threshold, as PyTorch).
  EXPECT_TRUE(tensors_equal(opd::threshold_backward(in({1, 1, 1}, {3}), in({-1, 0, 1}, {3}), 0),
                            ex({0, 0, 1}, {3})));
  EXPECT_TRUE(tensors_equal(opd::threshold_backward(in({1, 1, 1}, {3}), in({-1, 0.5, 1}, {3}), 0.5),
                            ex({0, 0, 1}, {3})));
  EXPECT_TRUE(tensors_equal(
      opd::threshold_backward(in({2, 2, 2}, {3}, kLong), in({-1, 0, 1}, {3}, kLong), 0),
      ex({0, 0, 2}, {3}, kLong)));
}

TEST_P(NnOps, SigmoidAndTanhBackwardAreTheirDerivatives) {
  Tensor x = in(kPoints, {2, 3}, kDouble), g = in(kGrads, {2, 3}, kDouble);
  auto ds = numeric_grad([](const Tensor& t) { return opd::sigmoid(t); }, kPoints, {2, 3}, kGrads);
  EXPECT_TRUE(tensors_equal(opd::sigmoid_backward(g, opd::sigmoid(x)), ex(ds, {2, 3}, kDouble)));
  auto dt = numeric_grad([](const Tensor& t) { return opd::tanh(t); }, kPoints, {2, 3}, kGrads);
  EXPECT_TRUE(tensors_equal(opd::tanh_backward(g, opd::tanh(x)), ex(dt, {2, 3}, kDouble)));
  std::string msg = error_of_type<Error>([&] {
    opd::sigmoid_backward(in({1, 1}, {2}, kLong), in({0, 1}, {2}, kLong));
  });
  EXPECT_THAT(msg, ::testing::HasSubstr("sigmoid_backward"));
  EXPECT_THAT(msg, ::testing::HasSubstr("Long"));
}

TEST_P(NnOps, GeluBackwardIsTheDerivativeOfGelu) {
  Tensor x = in(kPoints, {2, 3}, kDouble), g = in(kGrads, {2, 3}, kDouble);
  for (std::string_view approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    auto numeric = numeric_grad([&](const Tensor& t) { return opd::gelu(t, approximate); }, kPoints,
                                {2, 3}, kGrads);
    EXPECT_TRUE(tensors_equal(opd::gelu_backward(g, x, approximate), ex(numeric, {2, 3}, kDouble)));
  }
  EXPECT_EQ(error_of_type<Error>([&] { opd::gelu_backward(g, x, "foo"); }),
            "approximate argument must be either none or tanh.");
}

TEST_P(NnOps, SoftmaxBackwardDataIsTheDerivativeOfSoftmax) {
  Tensor x = in(kPoints, {2, 3}, kDouble), g = in(kGrads, {2, 3}, kDouble);
  for (int64_t dim : {1, 0, -1}) {
    SCOPED_TRACE(dim);
    auto numeric = numeric_grad([&](const Tensor& t) { return opd::_softmax(t, dim, false); },
                                kPoints, {2, 3}, kGrads);
    Tensor out = opd::_softmax(x, dim, false);
    EXPECT_TRUE(tensors_equal(opd::_softmax_backward_data(g, out, dim, kDouble),
                              ex(numeric, {2, 3}, kDouble)));
    auto numeric_log = numeric_grad(
        [&](const Tensor& t) { return opd::_log_softmax(t, dim, false); }, kPoints, {2, 3}, kGrads);
    Tensor log_out = opd::_log_softmax(x, dim, false);
    EXPECT_TRUE(tensors_equal(opd::_log_softmax_backward_data(g, log_out, dim, kDouble),
                              ex(numeric_log, {2, 3}, kDouble)));
  }
}

TEST_P(NnOps, NllLossBackwardIsTheDerivativeOfNllLoss) {
  Tensor t = in({1, -100, 3}, {3}, kLong);
  for (int64_t red : {kNone, kMean, kSum}) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "reduction " << red << (weighted ? " weighted" : ""));
      std::optional<Tensor> w =
          weighted ? std::optional<Tensor>(in(kWeights, {4}, kDouble)) : std::nullopt;
      std::vector<double> go =
          red == kNone ? std::vector<double>{0.5, -2, 1.5} : std::vector<double>{0.7};
      std::vector<int64_t> go_shape =
          red == kNone ? std::vector<int64_t>{3} : std::vector<int64_t>{};
      Tensor x = in(kLogProbs, {3, 4}, kDouble);
      auto [out, total_weight] = opd::nll_loss_forward(x, t, w, red, -100);
      auto numeric =
          numeric_grad([&](const Tensor& s) { return opd::nll_loss(s, t, w, red, -100); },
                       kLogProbs, {3, 4}, go);
      EXPECT_TRUE(tensors_equal(
          opd::nll_loss_backward(in(go, go_shape, kDouble), x, t, w, red, -100, total_weight),
          ex(numeric, {3, 4}, kDouble)));
    }
  }
}

TEST_P(NnOps, MseLossBackwardIsTheDerivativeOfMseLoss) {
  std::vector<double> target = {0.5, 0.5, -1, 2, 0, 1};
  for (int64_t red : {kNone, kMean, kSum}) {
    SCOPED_TRACE(red);
    std::vector<double> go = red == kNone ? kGrads : std::vector<double>{0.7};
    std::vector<int64_t> go_shape =
        red == kNone ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{};
    Tensor y = in(target, {2, 3}, kDouble);
    auto numeric = numeric_grad([&](const Tensor& s) { return opd::mse_loss(s, y, red); }, kPoints,
                                {2, 3}, go);
    EXPECT_TRUE(tensors_equal(
        opd::mse_loss_backward(in(go, go_shape, kDouble), in(kPoints, {2, 3}, kDouble), y, red),
        ex(numeric, {2, 3}, kDouble)));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, NnOps, ::testing::ValuesIn(op_test_devices()),
                         [](const auto& info) {
                           std::string name = info.param.str();
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace opd::test
