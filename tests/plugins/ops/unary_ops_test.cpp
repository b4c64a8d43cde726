// Unary operators: neg, abs, exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid, relu, relu_, gelu
// and clamp; those of Operators I (the floating functions log1p ... tan, rounding, sign, the value
// tests, bitwise_not, logical_not, nan_to_num, square, clamp_min/clamp_max and clamp.Tensor) with
// their in-place and out= forms; their dtype rules (integral inputs to Float where PyTorch does)
// and the errors for unsupported dtypes. Expected values are PyTorch 1.13's, computed in double.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "error_text.h"
#include "op_test_util.h"
#include "opd/ops.h"

namespace opd {
namespace {

using test::sizes;
using test::tensors_equal;
using test_util::error_text;
using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = std::numbers::pi;
constexpr double kE = std::numbers::e;

class UnaryOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  Tensor vec(const Doubles& v, ScalarType dtype = kFloat) const {
    return test::tensor(v, dtype, GetParam());
  }
  Tensor make(const Doubles& v, const Ints& shape, ScalarType dtype = kFloat) const {
    return test::tensor(v, shape, dtype, GetParam());
  }
};

TEST_P(UnaryOps, NegKeepsTheDtype) {
  EXPECT_TRUE(tensors_equal(neg(vec({1, -2.5, 0})), vec({-1, 2.5, 0})));
  EXPECT_TRUE(std::signbit(test::values(neg(vec({0})))[0]));  // -0.0
  EXPECT_TRUE(tensors_equal(vec({1, -2}, kInt).neg(), vec({-1, 2}, kInt)));
  EXPECT_TRUE(tensors_equal(-vec({1, 2}, kLong), vec({-1, -2}, kLong)));
  EXPECT_TRUE(tensors_equal(neg(vec({1}, kByte)), vec({255}, kByte)));
  EXPECT_TRUE(tensors_equal(neg(vec({1, -2}, kDouble)), vec({-1, 2}, kDouble)));
}

TEST_P(UnaryOps, NegOfBoolIsRefused) {
  EXPECT_EQ(test::error_of([&] {
              neg(vec({1, 0}, kBool));
            }),
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.");
}

TEST_P(UnaryOps, AbsKeepsTheDtype) {
  EXPECT_TRUE(tensors_equal(abs(vec({-1.5, 2, -0.0, -kInf, kNaN})), vec({1.5, 2, 0, kInf, kNaN})));
  EXPECT_FALSE(std::signbit(test::values(abs(vec({-0.0})))[0]));
  EXPECT_TRUE(tensors_equal(vec({-3, 3}, kLong).abs(), vec({3, 3}, kLong)));
  EXPECT_TRUE(tensors_equal(abs(vec({-2, 3}, kInt)), vec({2, 3}, kInt)));
  EXPECT_EQ(test::error_of([&] { abs(vec({1}, kBool)); }),
            GetParam().is_cuda() ? "\"abs_cuda\" not implemented for 'Bool'"
                                 : "\"abs_cpu\" not implemented for 'Bool'");
}

TEST_P(UnaryOps, FloatingFunctionsInDouble) {
  const ScalarType d = kDouble;
  EXPECT_TRUE(tensors_equal(exp(vec({0, 1, -1}, d)), vec({1, kE, 1 / kE}, d)));
  EXPECT_TRUE(tensors_equal(log(vec({1, kE, 0, -1}, d)), vec({0, 1, -kInf, kNaN}, d)));
  EXPECT_TRUE(tensors_equal(sqrt(vec({4, 2, 0, -1}, d)), vec({2, std::sqrt(2.0), 0, kNaN}, d)));
  EXPECT_TRUE(tensors_equal(rsqrt(vec({4, 0.25, 0, -1}, d)), vec({0.5, 2, kInf, kNaN}, d)));
  EXPECT_TRUE(tensors_equal(sin(vec({0, kPi / 2, kPi / 6}, d)), vec({0, 1, 0.5}, d)));
  EXPECT_TRUE(tensors_equal(cos(vec({0, kPi, kPi / 3}, d)), vec({1, -1, 0.5}, d)));
  EXPECT_TRUE(tensors_equal(tanh(vec({0, 1, -20}, d)), vec({0, std::tanh(1.0), -1}, d)));
  EXPECT_TRUE(tensors_equal(sigmoid(vec({0, 1, -100, 100}, d)),
                            vec({0.5, 1 / (1 + std::exp(-1.0)), 3.7200759760208356e-44, 1}, d)));
  // Methods are the same operators.
  EXPECT_TRUE(tensors_equal(vec({0, 1}, d).exp(), vec({1, kE}, d)));
  EXPECT_TRUE(tensors_equal(vec({4}, d).sqrt(), vec({2}, d)));
}

TEST_P(UnaryOps, FloatingFunctionsInFloat) {
  const double tol = 1e-6;
  EXPECT_TRUE(tensors_equal(exp(vec({0, 1, -1})), vec({1, kE, 1 / kE}), tol));
  EXPECT_TRUE(tensors_equal(log(vec({1, kE})), vec({0, 1}), tol));
  EXPECT_TRUE(tensors_equal(sin(vec({0, kPi / 2, kPi})), vec({0, 1, 0}), tol));
  EXPECT_TRUE(tensors_equal(cos(vec({0, kPi})), vec({1, -1}), tol));
  EXPECT_TRUE(tensors_equal(tanh(vec({0.5})), vec({std::tanh(0.5)}), tol));
  EXPECT_TRUE(tensors_equal(sigmoid(vec({-1})), vec({1 / (1 + kE)}), tol));
  EXPECT_TRUE(tensors_equal(rsqrt(vec({16})), vec({0.25}), tol));
}

TEST_P(UnaryOps, IntegralAndBoolInputsComputeInFloat) {
  EXPECT_TRUE(tensors_equal(exp(vec({0, 1}, kLong)), vec({1, kE})));
  EXPECT_TRUE(tensors_equal(exp(vec({1}, kBool)), vec({kE})));
  EXPECT_TRUE(tensors_equal(log(vec({1, 2}, kByte)), vec({0, std::log(2.0)})));
  EXPECT_TRUE(tensors_equal(sqrt(vec({4, 9}, kInt)), vec({2, 3})));
  EXPECT_TRUE(tensors_equal(rsqrt(vec({4, 0}, kLong)), vec({0.5, kInf})));
  EXPECT_TRUE(tensors_equal(sin(vec({1}, kInt)), vec({std::sin(1.0)})));
  EXPECT_TRUE(tensors_equal(cos(vec({0}, kByte)), vec({1})));
  EXPECT_TRUE(tensors_equal(tanh(vec({1, 0}, kBool)), vec({std::tanh(1.0), 0})));
  EXPECT_TRUE(tensors_equal(sigmoid(vec({0, 1}, kByte)), vec({0.5, 1 / (1 + 1 / kE)})));
}

TEST_P(UnaryOps, Relu) {
  EXPECT_TRUE(tensors_equal(relu(vec({-1.5, 0, 2})), vec({0, 0, 2})));
  EXPECT_TRUE(tensors_equal(relu(vec({kNaN, -kInf, kInf})), vec({kNaN, 0, kInf})));
  EXPECT_TRUE(tensors_equal(vec({-1, 2}, kLong).relu(), vec({0, 2}, kLong)));
  EXPECT_TRUE(tensors_equal(relu(vec({-1, 2}, kInt)), vec({0, 2}, kInt)));
  EXPECT_TRUE(tensors_equal(relu(vec({255, 2}, kByte)), vec({255, 2}, kByte)));
  EXPECT_EQ(test::error_of([&] { relu(vec({1}, kBool)); }),
            "Boolean inputs not supported for relu");
}

TEST_P(UnaryOps, ReluInPlace) {
  Tensor x = make({-1, 2, -3, 4}, {2, 2});
  const uint32_t before = x.version();
  const Tensor& r = relu_(x);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_TRUE(tensors_equal(x, make({0, 2, 0, 4}, {2, 2})));
  EXPECT_EQ(x.version(), before + 1);
  // Through a non-contiguous view: only the viewed elements change.
  Tensor y = make({-1, -2, -3, -4}, {2, 2});
  y.t().select(0, 1).relu_();  // column 1
  EXPECT_TRUE(tensors_equal(y, make({-1, 0, -3, 0}, {2, 2})));
}

TEST_P(UnaryOps, Gelu) {
  const Doubles x = {-1, 0, 1, 2, -3};
  EXPECT_TRUE(tensors_equal(
      gelu(vec(x, kDouble)),
      vec({-0.15865525393145707, 0, 0.8413447460685429, 1.9544997361036416, -0.0040496955765908},
          kDouble),
      1e-7));
  EXPECT_TRUE(tensors_equal(
      gelu(vec(x, kDouble), "tanh"),
      vec({-0.15880800939172324, 0, 0.8411919906082768, 1.954597694087775, -0.0036373920817729},
          kDouble),
      1e-7));
  EXPECT_TRUE(tensors_equal(gelu(vec({1})), vec({0.8413447460685429}), 1e-6));
  EXPECT_EQ(test::error_of([&] { gelu(vec({1}), "fast"); }),
            "approximate argument must be either none or tanh.");
  EXPECT_EQ(test::error_of([&] { gelu(vec({1}, kLong)); }),
            "\"GeluKernelImpl\" not implemented for 'Long'");
}

TEST_P(UnaryOps, ClampBounds) {
  Tensor x = vec({1, 5, 9});
  EXPECT_TRUE(tensors_equal(clamp(x, 2, 6), vec({2, 5, 6})));
  EXPECT_TRUE(tensors_equal(clamp(x, 6), vec({6, 6, 9})));
  EXPECT_TRUE(tensors_equal(clamp(x, std::nullopt, 4), vec({1, 4, 4})));
  EXPECT_TRUE(tensors_equal(x.clamp(2.5, 5.5), vec({2.5, 5, 5.5})));
  // min > max: everything becomes max, as PyTorch's min(max(x, lo), hi).
  EXPECT_TRUE(tensors_equal(clamp(x, 6, 2), vec({2, 2, 2})));
  EXPECT_TRUE(tensors_equal(clamp(vec({1, kNaN}), 0, 0.5), vec({0.5, kNaN})));
  EXPECT_EQ(test::error_of([&] { clamp(x, std::optional<Scalar>(), std::optional<Scalar>()); }),
            "torch.clamp: At least one of 'min' or 'max' must not be None");
}

TEST_P(UnaryOps, ClampPromotesIntegralTensorsWithTheBounds) {
  EXPECT_TRUE(tensors_equal(clamp(vec({1, 5, 9}, kInt), 2, 6), vec({2, 5, 6}, kInt)));
  EXPECT_TRUE(tensors_equal(clamp(vec({1, 5, 9}, kInt), 2.5), vec({2.5, 5, 9}, kFloat)));
  EXPECT_TRUE(tensors_equal(clamp(vec({1, 5}, kByte), 2), vec({2, 5}, kByte)));
  EXPECT_TRUE(tensors_equal(clamp(vec({1, 0}, kBool), 0), vec({1, 0}, kLong)));
  // A floating tensor keeps its dtype.
  EXPECT_EQ(clamp(vec({1, 5}), 2.5).scalar_type(), kFloat);
  EXPECT_EQ(clamp(vec({1, 5}, kDouble), 2).scalar_type(), kDouble);
}

TEST_P(UnaryOps, NonContiguousAndZeroDimInputs) {
  Tensor m = make({1, 4, 9, 16, 25, 36}, {2, 3});
  EXPECT_TRUE(tensors_equal(sqrt(m.t()), make({1, 4, 2, 5, 3, 6}, {3, 2})));
  EXPECT_TRUE(tensors_equal(neg(m.slice(1, 0, 3, 2)), make({-1, -9, -16, -36}, {2, 2})));
  EXPECT_TRUE(tensors_equal(sqrt(m.select(0, 1)), vec({4, 5, 6})));
  EXPECT_TRUE(tensors_equal(abs(vec({-2}).expand({3})), vec({2, 2, 2})));
  Tensor s = exp(make({0}, {}, kDouble));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_TRUE(tensors_equal(s, make({1}, {}, kDouble)));
  EXPECT_EQ(sizes(relu(empty({0, 3}, TensorOptions().device(GetParam())))), (Ints{0, 3}));
}

INSTANTIATE_TEST_SUITE_P(Devices, UnaryOps, ::testing::ValuesIn(test::op_test_devices()),
                         [](const auto& info) {
                           return std::string(device_type_name(info.param.type));
                         });

class UnaryOpsMeta : public ::testing::Test {
 protected:
  void SetUp() override { test::load_default_plugins(); }
};

TEST_F(UnaryOpsMeta, ShapesDtypesAndErrorsMatchTheCpu) {
  auto meta = [](Ints shape, ScalarType dtype) {
    return empty(shape, TensorOptions().device(kMeta).dtype(dtype));
  };
  Tensor e = exp(meta({2, 3}, kLong));
  EXPECT_TRUE(e.is_meta());
  EXPECT_EQ(sizes(e), (Ints{2, 3}));
  EXPECT_EQ(e.scalar_type(), kFloat);
  EXPECT_EQ(abs(meta({4}, kInt)).scalar_type(), kInt);
  EXPECT_EQ(clamp(meta({4}, kInt), 0.5).scalar_type(), kFloat);
  EXPECT_EQ(gelu(meta({4}, kDouble), "tanh").scalar_type(), kDouble);
  EXPECT_EQ(test::error_of([&] { neg(meta({1}, kBool)); }),
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.");
  EXPECT_EQ(
      test::error_of([&] { clamp(meta({1}, kFloat), std::optional<Scalar>(), std::nullopt); }),
      "torch.clamp: At least one of 'min' or 'max' must not be None");
  EXPECT_EQ(test::error_of([&] { gelu(meta({1}, kFloat), "fast"); }),
            "approximate argument must be either none or tanh.");
}

// Operators I. The CPU only: the CUDA plugin has none of them.
class UnaryOpsCpu : public ::testing::Test {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  static Tensor vec(const Doubles& v, ScalarType dtype = kFloat) {
    return test::tensor(v, dtype, Device(DeviceType::CPU));
  }
};

// Each function against std:: in double, over 19 elements: two AVX2 vectors and a tail in float
// (Note [SLEEF in the unary kernels]), within SLEEF's 1 ulp.
TEST_F(UnaryOpsCpu, FloatingFunctionsAgreeWithTheStandardLibrary) {
  Doubles in;
  for (int i = 0; i < 19; ++i) in.push_back(-0.9 + 0.1 * i);
  struct Case {
    const char* name;
    Tensor (*op)(const Tensor&);
    double (*ref)(double);
  };
  const Case cases[] = {
      {"exp", [](const Tensor& t) { return exp(t); }, [](double x) { return std::exp(x); }},
      {"tanh", [](const Tensor& t) { return tanh(t); }, [](double x) { return std::tanh(x); }},
      {"sigmoid", [](const Tensor& t) { return sigmoid(t); },
       [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"log1p", [](const Tensor& t) { return log1p(t); }, [](double x) { return std::log1p(x); }},
      {"expm1", [](const Tensor& t) { return expm1(t); }, [](double x) { return std::expm1(x); }},
      {"exp2", [](const Tensor& t) { return exp2(t); }, [](double x) { return std::exp2(x); }},
      {"erf", [](const Tensor& t) { return erf(t); }, [](double x) { return std::erf(x); }},
      {"erfc", [](const Tensor& t) { return erfc(t); }, [](double x) { return std::erfc(x); }},
      {"asin", [](const Tensor& t) { return asin(t); }, [](double x) { return std::asin(x); }},
      {"acos", [](const Tensor& t) { return acos(t); }, [](double x) { return std::acos(x); }},
      {"atan", [](const Tensor& t) { return atan(t); }, [](double x) { return std::atan(x); }},
      {"asinh", [](const Tensor& t) { return asinh(t); }, [](double x) { return std::asinh(x); }},
      {"atanh", [](const Tensor& t) { return atanh(t); }, [](double x) { return std::atanh(x); }},
      {"sinh", [](const Tensor& t) { return sinh(t); }, [](double x) { return std::sinh(x); }},
      {"cosh", [](const Tensor& t) { return cosh(t); }, [](double x) { return std::cosh(x); }},
      {"tan", [](const Tensor& t) { return tan(t); }, [](double x) { return std::tan(x); }},
      {"reciprocal", [](const Tensor& t) { return reciprocal(t); }, [](double x) { return 1 / x; }},
      // erfinv is checked through erf, its inverse.
      {"erfinv", [](const Tensor& t) { return erfinv(t); }, [](double x) { return x; }},
  };
  for (const Case& c : cases) {
    for (ScalarType dtype : {kFloat, kDouble}) {
      const std::vector<double> got = test::values(c.op(vec(in, dtype)));
      ASSERT_EQ(got.size(), in.size()) << c.name;
      for (size_t i = 0; i < in.size(); ++i) {
        if (std::string(c.name) == "reciprocal" && in[i] == 0) continue;
        const double want = c.ref(in[i]);
        const double value = std::string(c.name) == "erfinv" ? std::erf(got[i]) : got[i];
        const double tol = dtype == kFloat ? 2e-6 * std::max(1.0, std::abs(want)) : 1e-13;
        EXPECT_NEAR(value, want, tol) << c.name << " " << to_string(dtype) << " at " << in[i];
      }
    }
  }
  EXPECT_TRUE(tensors_equal(erfinv(vec({1, -1, 2})), vec({kInf, -kInf, kNaN})));
  EXPECT_TRUE(tensors_equal(acosh(vec({1}, kDouble)), vec({0}, kDouble)));
}

TEST_F(UnaryOpsCpu, RoundingKeepsIntegersAndRoundsHalfToEven) {
  const Tensor x = vec({0.5, 1.5, 2.5, -0.5, -1.7, 2.3, kInf, -kInf, kNaN});
  EXPECT_TRUE(tensors_equal(round(x), vec({0, 2, 2, -0.0, -2, 2, kInf, -kInf, kNaN})));
  EXPECT_TRUE(tensors_equal(floor(x), vec({0, 1, 2, -1, -2, 2, kInf, -kInf, kNaN})));
  EXPECT_TRUE(tensors_equal(ceil(x), vec({1, 2, 3, -0.0, -1, 3, kInf, -kInf, kNaN})));
  EXPECT_TRUE(tensors_equal(trunc(x), vec({0, 1, 2, -0.0, -1, 2, kInf, -kInf, kNaN})));
  EXPECT_TRUE(tensors_equal(frac(vec({1.25, -1.25})), vec({0.25, -0.25})));
  EXPECT_TRUE(tensors_equal(floor(vec({3, -4}, kLong)), vec({3, -4}, kLong)));
  EXPECT_TRUE(tensors_equal(round(vec({1.2345, 1250}, kDouble), 2), vec({1.23, 1250}, kDouble)));
  EXPECT_TRUE(tensors_equal(round(vec({1250, 1350}, kDouble), -2), vec({1200, 1400}, kDouble)));
  EXPECT_EQ(test::error_of([&] { floor(vec({1}, kHalf)); }),
            "\"floor_vml_cpu\" not implemented for 'Half'");
  EXPECT_EQ(test::error_of([&] { frac(vec({1}, kLong)); }),
            "\"frac_cpu\" not implemented for 'Long'");
}

TEST_F(UnaryOpsCpu, SignTestsAndBitwise) {
  EXPECT_TRUE(tensors_equal(sign(vec({-2, 0, 3, kNaN})), vec({-1, 0, 1, 0})));
  EXPECT_TRUE(tensors_equal(sgn(vec({-2, 5}, kInt)), vec({-1, 1}, kInt)));
  const Tensor x = vec({1, kInf, -kInf, kNaN});
  EXPECT_TRUE(tensors_equal(isposinf(x), vec({0, 1, 0, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(isneginf(x), vec({0, 0, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(isinf(x), vec({0, 1, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(isnan(x), vec({0, 0, 0, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(isfinite(x), vec({1, 0, 0, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(isfinite(vec({1}, kLong)), vec({1}, kBool)));
  EXPECT_TRUE(tensors_equal(nan_to_num(x, 5.0),
                            vec({1, 3.4028234663852886e38, -3.4028234663852886e38, 5})));
  EXPECT_TRUE(tensors_equal(bitwise_not(vec({0, 5}, kLong)), vec({-1, -6}, kLong)));
  EXPECT_TRUE(tensors_equal(bitwise_not(vec({0, 1}, kBool)), vec({1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(logical_not(vec({0, 2.5})), vec({1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(square(vec({-3, 2}, kInt)), vec({9, 4}, kInt)));
}

TEST_F(UnaryOpsCpu, InPlaceAndOutFormsWriteTheirTensor) {
  Tensor x = vec({0.25, 4});
  Tensor& r = exp2_(x);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_TRUE(tensors_equal(x, vec({std::exp2(0.25), 16})));
  Tensor out = vec({0, 0}, kDouble);
  sqrt_out(out, vec({4, 9}));
  EXPECT_TRUE(tensors_equal(out, vec({2, 3}, kDouble)));
  Tensor i = vec({1, 2}, kLong);
  EXPECT_EQ(test::error_of([&] { exp_(i); }),
            "result type Float can't be cast to the desired output type Long");
  Tensor b = vec({0, 0}, kBool);
  isneginf_out(b, vec({-kInf, 1}));
  EXPECT_TRUE(tensors_equal(b, vec({1, 0}, kBool)));
}

TEST_F(UnaryOpsCpu, ClampWithTensorsAndOneBound) {
  const Tensor x = vec({-3, 0, 3, kNaN});
  EXPECT_TRUE(tensors_equal(clamp_min(x, -1), vec({-1, 0, 3, kNaN})));
  EXPECT_TRUE(tensors_equal(clamp_max(x, 1), vec({-3, 0, 1, kNaN})));
  EXPECT_TRUE(tensors_equal(clamp(x, vec({-1}), vec({2})), vec({-1, 0, 2, kNaN})));
  EXPECT_TRUE(tensors_equal(clamp(x, std::nullopt, vec({2, 2, 2, 2})), vec({-3, 0, 2, kNaN})));
  EXPECT_TRUE(tensors_equal(clamp_min(vec({1, 5}, kInt), vec({3}, kLong)), vec({3, 5}, kLong)));
  EXPECT_TRUE(tensors_equal(clamp_max(vec({0, 1}, kBool), vec({0, 0}, kBool)), vec({0, 0}, kBool)));
  EXPECT_EQ(test::error_of([&] { clamp(x, std::optional<Tensor>(), std::optional<Tensor>()); }),
            "torch.clamp: At least one of 'min' or 'max' must not be None");
}

TEST_F(UnaryOpsMeta, OperatorsIHaveMetaKernels) {
  auto meta = [](Ints shape, ScalarType dtype) {
    return empty(shape, TensorOptions().device(kMeta).dtype(dtype));
  };
  EXPECT_EQ(erfinv(meta({2, 3}, kInt)).scalar_type(), kFloat);
  EXPECT_EQ(floor(meta({2}, kLong)).scalar_type(), kLong);
  EXPECT_EQ(isposinf(meta({2}, kFloat)).scalar_type(), kBool);
  EXPECT_EQ(sizes(clamp(meta({2, 1}, kInt), meta({3}, kDouble), std::nullopt)), (Ints{2, 3}));
  EXPECT_EQ(test::error_of([&] { tan(meta({1}, kHalf)); }),
            "\"tan_vml_cpu\" not implemented for 'Half'");
}

}  // namespace
}  // namespace opd
