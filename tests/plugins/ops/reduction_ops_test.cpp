// Reductions against PyTorch 1.13: sum, mean, amax, amin, argmax and max.dim. Expected values
// are worked out by hand (or by plain loops) from the inputs; error texts are PyTorch's.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "op_test_util.h"
#include "warning_capture.h"

namespace opd::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using test::error_of_type;

class ReductionOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { load_default_plugins(); }
  // An input on the device under test.
  Tensor in(const std::vector<double>& v, std::vector<int64_t> sizes,
            ScalarType dt = kFloat) const {
    return tensor(v, std::move(sizes), dt, GetParam());
  }
  // An expected result (CPU).
  static Tensor ex(const std::vector<double>& v, std::vector<int64_t> sizes,
                   ScalarType dt = kFloat) {
    return tensor(v, std::move(sizes), dt);
  }
  // 0, 1, ..., n-1 in the given sizes.
  Tensor iota(std::vector<int64_t> sizes, ScalarType dt = kFloat) const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
    return in(v, std::move(sizes), dt);
  }
};

// ---- sum ----------------------------------------------------------------------------------------

TEST_P(ReductionOps, SumOfAllElementsKeepsFloatingDtype) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(tensors_equal(opd::sum(x), ex({21}, {})));
  EXPECT_TRUE(tensors_equal(x.sum(), ex({21}, {})));
  EXPECT_TRUE(tensors_equal(opd::sum(in({0.5, 0.25}, {2}, kDouble)), ex({0.75}, {}, kDouble)));
}

TEST_P(ReductionOps, SumPromotesIntegersAndBoolToInt64) {
  EXPECT_TRUE(tensors_equal(opd::sum(in({1, 2, 3}, {3}, kInt)), ex({6}, {}, kLong)));
  // No wrap-around at 255: UInt8 accumulates as Int64.
  EXPECT_TRUE(tensors_equal(opd::sum(in({200, 100, 250}, {3}, kByte)), ex({550}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::sum(in({1, 0, 1, 1}, {4}, kBool)), ex({3}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::sum(in({1, 1, 0}, {3}, kBool), {0}, false), ex({2}, {}, kLong)));
}

TEST_P(ReductionOps, SumOfInt64IsExactBeyondDoublePrecision) {
  // 2^53 + 1 has no double representation: an accumulator in double would give 2^53.
  Tensor s = opd::sum(in({9007199254740992.0, 1.0}, {2}, kLong));
  EXPECT_EQ(s.item<int64_t>(), int64_t{9007199254740993});
}

TEST_P(ReductionOps, SumWithDtypeConvertsBeforeSumming) {
  EXPECT_TRUE(tensors_equal(opd::sum(in({1.5, 2.5}, {2}), kDouble), ex({4}, {}, kDouble)));
  EXPECT_TRUE(tensors_equal(opd::sum(in({1, 2}, {2}, kInt), kFloat), ex({3}, {}, kFloat)));
  // Each element becomes Long first: 1 + 2, not trunc(4.2).
  EXPECT_TRUE(tensors_equal(opd::sum(in({1.5, 2.7}, {2}), kLong), ex({3}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::sum(in({1, 2, 3, 4}, {2, 2}, kInt), {0}, false, kDouble),
                            ex({4, 6}, {2}, kDouble)));
}

TEST_P(ReductionOps, SumOverOneDimAcceptsNegativeDimsAndKeepdim) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(tensors_equal(opd::sum(x, {0}, false), ex({5, 7, 9}, {3})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, {-1}, false), ex({6, 15}, {2})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, {-2}, true), ex({5, 7, 9}, {1, 3})));
  EXPECT_TRUE(tensors_equal(x.sum({1}, true), ex({6, 15}, {2, 1})));
}

TEST_P(ReductionOps, SumOverSeveralDims) {
  Tensor x = iota({2, 3, 4});  // x[a][b][c] = 12a + 4b + c
  std::vector<double> over_0_2(3, 0.0);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) over_0_2[b] += 12 * a + 4 * b + c;
  EXPECT_TRUE(tensors_equal(opd::sum(x, {0, 2}, false), ex(over_0_2, {3})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, {2, 0}, false), ex(over_0_2, {3})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, {-1, 0}, true), ex(over_0_2, {1, 3, 1})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, {0, 1, 2}, false), ex({276}, {})));
}

TEST_P(ReductionOps, SumOverEmptyDimListOrNoneReducesEverything) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(tensors_equal(opd::sum(x, IntArrayRef{}, false), ex({21}, {})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, IntArrayRef{}, true), ex({21}, {1, 1})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, OptionalIntArrayRef(), false), ex({21}, {})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, OptionalIntArrayRef(), true), ex({21}, {1, 1})));
}

TEST_P(ReductionOps, SumRejectsRepeatedDims) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::sum(x, {0, 0}, false);
            }),
            "dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::sum(x, {0, -2}, false);
            }),
            "dim 0 appears multiple times in the list of dims");
}

TEST_P(ReductionOps, SumRejectsDimOutOfRange) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::sum(x, {2}, false); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::sum(x, {-3}, false); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
}

TEST_P(ReductionOps, SumOfEmptyIsZero) {
  Tensor e = opd::empty({0, 3}, TensorOptions().dtype(kFloat).device(GetParam()));
  EXPECT_TRUE(tensors_equal(opd::sum(e), ex({0}, {})));
  EXPECT_TRUE(tensors_equal(opd::sum(e, {0}, false), ex({0, 0, 0}, {3})));
  EXPECT_TRUE(tensors_equal(opd::sum(e, {1}, false), ex({}, {0})));
  EXPECT_TRUE(tensors_equal(opd::sum(e, {1}, true), ex({}, {0, 1})));
  Tensor el = opd::empty({0}, TensorOptions().dtype(kLong).device(GetParam()));
  EXPECT_TRUE(tensors_equal(opd::sum(el), ex({0}, {}, kLong)));
}

TEST_P(ReductionOps, SumOfZeroDimTensorAcceptsDimZeroAndMinusOne) {
  Tensor x = in({3}, {});
  EXPECT_TRUE(tensors_equal(opd::sum(x, {0}, false), ex({3}, {})));
  EXPECT_TRUE(tensors_equal(opd::sum(x, {-1}, true), ex({3}, {})));
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::sum(x, {1}, false); }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST_P(ReductionOps, SumOfNonContiguousInputs) {
  Tensor base = in({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor xt = base.t();  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_TRUE(tensors_equal(opd::sum(xt, {0}, false), ex({6, 15}, {2})));
  EXPECT_TRUE(tensors_equal(opd::sum(xt, {1}, false), ex({5, 7, 9}, {3})));
  EXPECT_TRUE(tensors_equal(opd::sum(xt), ex({21}, {})));

  Tensor rows = iota({4, 3}).slice(0, 0, 4, 2);  // [[0, 1, 2], [6, 7, 8]]
  EXPECT_TRUE(tensors_equal(opd::sum(rows, {1}, false), ex({3, 21}, {2})));
  Tensor cols = iota({4, 3}).slice(1, 1, 3);  // columns 1 and 2
  EXPECT_TRUE(tensors_equal(opd::sum(cols, {0}, false), ex({22, 26}, {2})));

  Tensor expanded = in({1, 2, 3}, {1, 3}).expand({2, 3});
  EXPECT_TRUE(tensors_equal(opd::sum(expanded, {0}, false), ex({2, 4, 6}, {3})));
  EXPECT_TRUE(tensors_equal(opd::sum(expanded), ex({12}, {})));
}

// ---- mean ---------------------------------------------------------------------------------------

TEST_P(ReductionOps, MeanOfFloatingTensors) {
  Tensor x = in({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(tensors_equal(opd::mean(x), ex({2.5}, {})));
  EXPECT_TRUE(tensors_equal(x.mean(), ex({2.5}, {})));
  EXPECT_TRUE(tensors_equal(opd::mean(in({1, 2}, {2}, kDouble)), ex({1.5}, {}, kDouble)));
  EXPECT_TRUE(tensors_equal(opd::mean(x, {0}, false), ex({2, 3}, {2})));
  EXPECT_TRUE(tensors_equal(opd::mean(x, {-1}, true), ex({1.5, 3.5}, {2, 1})));
  EXPECT_TRUE(tensors_equal(opd::mean(x, {0, 1}, false), ex({2.5}, {})));
  EXPECT_TRUE(tensors_equal(opd::mean(x, IntArrayRef{}, true), ex({2.5}, {1, 1})));
  EXPECT_TRUE(tensors_equal(opd::mean(x.t(), {1}, false), ex({2, 3}, {2})));
}

TEST_P(ReductionOps, MeanOfIntegersWithFloatingDtype) {
  Tensor x = in({1, 2, 3, 4}, {2, 2}, kLong);
  EXPECT_TRUE(tensors_equal(opd::mean(x, kFloat), ex({2.5}, {})));
  EXPECT_TRUE(tensors_equal(opd::mean(x, {0}, false, kDouble), ex({2, 3}, {2}, kDouble)));
}

TEST_P(ReductionOps, MeanRejectsIntegerAndBoolInputs) {
  Tensor x = in({1, 2}, {2}, kLong);
  EXPECT_EQ(error_of_type<Error>([&] { opd::mean(x); }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: Long");
  EXPECT_EQ(error_of_type<Error>([&] { opd::mean(x, {0}, false); }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: Long");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::mean(in({1, 0}, {2}, kBool));
            }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            "complex dtype. Got: Bool");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::mean(in({1, 2}, {2}, kInt), {0}, false, kInt);
            }),
            "mean(): could not infer output dtype. Optional dtype must be either a floating point "
            "or complex dtype. Got: Int");
}

TEST_P(ReductionOps, MeanOfEmptyIsNaN) {
  Tensor e = opd::empty({0, 3}, TensorOptions().dtype(kFloat).device(GetParam()));
  EXPECT_TRUE(tensors_equal(opd::mean(e), ex({kNaN}, {})));
  EXPECT_TRUE(tensors_equal(opd::mean(e, {0}, false), ex({kNaN, kNaN, kNaN}, {3})));
}

// ---- amax / amin --------------------------------------------------------------------------------

TEST_P(ReductionOps, AmaxAndAminOverDims) {
  Tensor x = in({1, 5, 2, 7, 0, 7}, {2, 3});
  EXPECT_TRUE(tensors_equal(opd::amax(x, {1}), ex({5, 7}, {2})));
  EXPECT_TRUE(tensors_equal(opd::amin(x, {1}), ex({1, 0}, {2})));
  EXPECT_TRUE(tensors_equal(opd::amax(x, {0}), ex({7, 5, 7}, {3})));
  EXPECT_TRUE(tensors_equal(opd::amin(x, {-2}, true), ex({1, 0, 2}, {1, 3})));
  EXPECT_TRUE(tensors_equal(opd::amax(x, {0, 1}), ex({7}, {})));
  EXPECT_TRUE(tensors_equal(opd::amax(x), ex({7}, {})));  // dim=[] reduces every dim
  EXPECT_TRUE(tensors_equal(x.amin({}, true), ex({0}, {1, 1})));
  EXPECT_TRUE(tensors_equal(opd::amax(x.t(), {1}), ex({7, 5, 7}, {3})));
}

TEST_P(ReductionOps, AmaxAndAminKeepIntegerAndBoolDtypes) {
  Tensor x = in({-3, 8, 4, -9}, {2, 2}, kLong);
  EXPECT_TRUE(tensors_equal(opd::amax(x, {1}), ex({8, 4}, {2}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::amin(x, {1}), ex({-3, -9}, {2}, kLong)));
  Tensor b = in({1, 0, 0, 0}, {2, 2}, kBool);
  EXPECT_TRUE(tensors_equal(opd::amax(b, {1}), ex({1, 0}, {2}, kBool)));
  EXPECT_TRUE(tensors_equal(opd::amin(b, {0}), ex({0, 0}, {2}, kBool)));
}

TEST_P(ReductionOps, AmaxAndAminPropagateNaN) {
  Tensor x = in({1, kNaN, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(tensors_equal(opd::amax(x, {1}), ex({kNaN, 6}, {2})));
  EXPECT_TRUE(tensors_equal(opd::amin(x, {1}), ex({kNaN, 4}, {2})));
  EXPECT_TRUE(tensors_equal(opd::amax(x), ex({kNaN}, {})));
  // First or last position alike.
  EXPECT_TRUE(tensors_equal(opd::amax(in({kNaN, 1}, {2}), {0}), ex({kNaN}, {})));
  EXPECT_TRUE(tensors_equal(opd::amin(in({1, kNaN}, {2}), {0}), ex({kNaN}, {})));
}

TEST_P(ReductionOps, AmaxOfEmptyNeedsANonEmptyReductionDim) {
  Tensor e = opd::empty({0, 3}, TensorOptions().dtype(kFloat).device(GetParam()));
  EXPECT_TRUE(tensors_equal(opd::amax(e, {1}), ex({}, {0})));
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::amax(e, {0}); }),
            "amax(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::amax(e, {-2}); }),
            "amax(): Expected reduction dim -2 to have non-zero size.");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::amin(e, {0}); }),
            "amin(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of_type<Error>([&] { opd::amax(e); }),
            "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.");
}

TEST_P(ReductionOps, AmaxRejectsRepeatedAndOutOfRangeDims) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::amax(x, {0, 0});
            }),
            "dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::amax(x, {2}); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

// ---- argmax -------------------------------------------------------------------------------------

TEST_P(ReductionOps, ArgmaxReturnsFirstOccurrence) {
  EXPECT_TRUE(tensors_equal(opd::argmax(in({1, 3, 3, 2}, {4})), ex({1}, {}, kLong)));
  Tensor x = in({1, 5, 7, 7}, {2, 2});
  EXPECT_TRUE(tensors_equal(opd::argmax(x, 1), ex({1, 0}, {2}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::argmax(x, 0), ex({1, 1}, {2}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::argmax(x, -1, true), ex({1, 0}, {2, 1}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::argmax(in({4, 4, 4}, {3}, kLong)), ex({0}, {}, kLong)));
}

TEST_P(ReductionOps, ArgmaxWithoutDimIndexesTheFlattenedTensor) {
  Tensor x = in({1, 5, 7, 7}, {2, 2});
  EXPECT_TRUE(tensors_equal(opd::argmax(x), ex({2}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::argmax(x, std::nullopt, true), ex({2}, {1, 1}, kLong)));
  // Flattened in logical (row-major) order, not storage order: x.t() is [[1, 7], [5, 7]].
  EXPECT_TRUE(tensors_equal(opd::argmax(x.t()), ex({1}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::argmax(in({3}, {})), ex({0}, {}, kLong)));
}

TEST_P(ReductionOps, ArgmaxTreatsNaNAsTheMaximum) {
  EXPECT_TRUE(tensors_equal(opd::argmax(in({1, kNaN, 3, kNaN}, {4})), ex({1}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::argmax(in({1, 2, 9, kNaN}, {2, 2}), 1), ex({1, 1}, {2}, kLong)));
}

TEST_P(ReductionOps, ArgmaxOfEmptyAndBadDims) {
  Tensor e = opd::empty({0, 3}, TensorOptions().dtype(kFloat).device(GetParam()));
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::argmax(e); }),
            "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::argmax(e, 0); }),
            "argmax(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::argmax(e, -2); }),
            "argmax(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_TRUE(tensors_equal(opd::argmax(e, 1), ex({}, {0}, kLong)));
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::argmax(x, 2); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

// PyTorch 1.13's RuntimeError names its CPU kernel: "argmax_cpu" not implemented for 'Bool'.
TEST_P(ReductionOps, ArgmaxOfBoolIsAnErrorNamingKernelAndDtype) {
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::argmax(in({1, 0, 1}, {3}, kBool));
            }),
            "\"argmax_cpu\" not implemented for 'Bool'");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::argmin(in({1, 0, 1}, {3}, kBool));
            }),
            "\"argmin_cpu\" not implemented for 'Bool'");
}

// ---- max.dim ------------------------------------------------------------------------------------

TEST_P(ReductionOps, MaxDimReturnsValuesAndFirstIndices) {
  Tensor x = in({1, 3, 3, 2, 2, 1}, {2, 3}, kLong);
  auto [values, indices] = opd::max(x, 1);
  EXPECT_TRUE(tensors_equal(values, ex({3, 2}, {2}, kLong)));
  EXPECT_TRUE(tensors_equal(indices, ex({1, 0}, {2}, kLong)));

  auto [v0, i0] = opd::max(x, 0, true);
  EXPECT_TRUE(tensors_equal(v0, ex({2, 3, 3}, {1, 3}, kLong)));
  EXPECT_TRUE(tensors_equal(i0, ex({1, 0, 0}, {1, 3}, kLong)));

  auto [vt, it] = x.t().max(-1);  // x.t() = [[1, 2], [3, 2], [3, 1]]
  EXPECT_TRUE(tensors_equal(vt, ex({2, 3, 3}, {3}, kLong)));
  EXPECT_TRUE(tensors_equal(it, ex({1, 0, 0}, {3}, kLong)));
}

TEST_P(ReductionOps, MaxDimPropagatesNaNWithItsIndex) {
  auto [values, indices] = opd::max(in({1, kNaN, 3, 4, 5, 6}, {2, 3}), 1);
  EXPECT_TRUE(tensors_equal(values, ex({kNaN, 6}, {2})));
  EXPECT_TRUE(tensors_equal(indices, ex({1, 2}, {2}, kLong)));
}

TEST_P(ReductionOps, MaxDimOfZeroDimTensor) {
  auto [values, indices] = opd::max(in({3}, {}), 0);
  EXPECT_TRUE(tensors_equal(values, ex({3}, {})));
  EXPECT_TRUE(tensors_equal(indices, ex({0}, {}, kLong)));
}

TEST_P(ReductionOps, MaxDimOfEmptyAndBadDims) {
  Tensor e = opd::empty({0, 3}, TensorOptions().dtype(kFloat).device(GetParam()));
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::max(e, 0); }),
            "max(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::max(e, -2); }),
            "max(): Expected reduction dim 0 to have non-zero size.");
  auto [values, indices] = opd::max(e, 1);
  EXPECT_TRUE(tensors_equal(values, ex({}, {0})));
  EXPECT_TRUE(tensors_equal(indices, ex({}, {0}, kLong)));
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::max(x, 2); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(error_of_type<IndexError>([&] { opd::mean(x, {-3}, false); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
}

// ---- complex ------------------------------------------------------------------------------------

TEST_P(ReductionOps, ComplexSumAndMeanAddBothParts) {
  Tensor z = complex_tensor({{1, 2}, {3, -4}, {5, 6}, {-7, 8}}, {2, 2}, kComplexFloat, GetParam());
  EXPECT_TRUE(tensors_equal(opd::sum(z), complex_tensor({{2, 12}}, {}, kComplexFloat)));
  EXPECT_TRUE(tensors_equal(opd::sum(z, {0}, false),
                            complex_tensor({{6, 8}, {-4, 4}}, {2}, kComplexFloat)));
  EXPECT_TRUE(tensors_equal(opd::sum(z, {1}, true),
                            complex_tensor({{4, -2}, {-2, 14}}, {2, 1}, kComplexFloat)));
  EXPECT_TRUE(tensors_equal(opd::mean(z), complex_tensor({{0.5, 3}}, {}, kComplexFloat)));
  EXPECT_TRUE(tensors_equal(opd::mean(z, {1}, false),
                            complex_tensor({{2, -1}, {-1, 7}}, {2}, kComplexFloat)));
  // Enough elements for several blocks (and a grid reduction on a device), exact in double.
  constexpr int64_t n = 100000;
  std::vector<Complex> many(n);
  for (int64_t i = 0; i < n; ++i) many[i] = Complex(static_cast<double>(i), -2.0 * i);
  const double total = static_cast<double>(n) * (n - 1) / 2;
  EXPECT_TRUE(tensors_equal(opd::sum(complex_tensor(many, {n}, kComplexDouble, GetParam())),
                            complex_tensor({{total, -2 * total}}, {}, kComplexDouble), 0));
}

TEST_P(ReductionOps, ComplexNumbersHaveNoOrder) {
  Tensor z = complex_tensor({{1, 2}, {3, -4}}, {2}, kComplexFloat, GetParam());
  EXPECT_EQ(error_of_type<Error>([&] { opd::amax(z, {0}, false); }),
            "\"max_values_cpu\" not implemented for 'ComplexFloat'");
  EXPECT_EQ(error_of_type<Error>([&] { opd::argmax(z, 0, false); }),
            "\"argmax_cpu\" not implemented for 'ComplexFloat'");
}

// ---- out= (structured: sum.IntList_out, mean.out, amax.out, amin.out, argmax.out) --------------

TEST_P(ReductionOps, OutFormsWriteIntoOutAndReturnIt) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor out = in({0, 0}, {2});
  const uint32_t version = out.version();
  void* const data = out.data_ptr();
  EXPECT_EQ(&opd::sum_out(out, x, {1}), &out);
  EXPECT_TRUE(tensors_equal(out, ex({6, 15}, {2})));
  EXPECT_EQ(&opd::mean_outf(x, {1}, false, std::nullopt, out), &out);
  EXPECT_TRUE(tensors_equal(out, ex({2, 5}, {2})));
  opd::amax_out(out, x, {1});
  EXPECT_TRUE(tensors_equal(out, ex({3, 6}, {2})));
  opd::amin_out(out, x, {1});
  EXPECT_TRUE(tensors_equal(out, ex({1, 4}, {2})));
  EXPECT_EQ(out.data_ptr(), data);
  EXPECT_EQ(out.version(), version + 4);  // one per call
  Tensor indices = in({0, 0, 0}, {3}, kLong);
  opd::argmax_out(indices, x, 0);
  EXPECT_TRUE(tensors_equal(indices, ex({1, 1, 1}, {3}, kLong)));
  // An empty out is resized; keepdim keeps the reduced dims.
  Tensor empty = in({}, {0});
  opd::sum_out(empty, x, {0}, true);
  EXPECT_TRUE(tensors_equal(empty, ex({5, 7, 9}, {1, 3})));
}

TEST_P(ReductionOps, OutFormsTakeTheirDtypeFromOutAsPyTorch) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3}, kInt);
  // sum without a dtype sums in out's dtype; with one, out must have it.
  Tensor d = in({0, 0}, {2}, kDouble);
  opd::sum_out(d, x, {1});
  EXPECT_TRUE(tensors_equal(d, ex({6, 15}, {2}, kDouble)));
  Tensor i = in({0, 0}, {2}, kInt);
  opd::sum_out(i, x, {1});
  EXPECT_TRUE(tensors_equal(i, ex({6, 15}, {2}, kInt)));
  EXPECT_EQ(error_of([&] { opd::sum_out(i, x, {1}, false, kLong); }),
            "Expected out tensor to have dtype long int, but got int instead");
  // mean: the input (or dtype) must be floating; out may be wider, not integral.
  Tensor f = in({1.5, 2, 2.5, 4}, {2, 2});
  opd::mean_out(d, f, {1});
  EXPECT_TRUE(tensors_equal(d, ex({1.75, 3.25}, {2}, kDouble)));
  EXPECT_EQ(error_of([&] { opd::mean_out(d, x, {1}); }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            "or complex dtype. Got: Int");
  Tensor l = in({0, 0}, {2}, kLong);
  EXPECT_EQ(error_of([&] { opd::mean_out(l, f, {1}); }),
            "result type Float can't be cast to the desired output type Long");
  // amax and amin keep the input's dtype; argmax writes Long.
  EXPECT_EQ(error_of([&] { opd::amax_out(l, f, {1}); }),
            "Expected the dtype for input and out to match, but got Float for input's dtype and "
            "Long for out's dtype.");
  Tensor h = in({0, 0}, {2}, kHalf);
  EXPECT_EQ(error_of([&] { opd::argmax_out(h, f, 1); }),
            "Expected out tensor to have dtype long int, but got c10::Half instead");
}

TEST_P(ReductionOps, OutWithElementsIsResizedWithAWarningAndANonContiguousOneIsWritten) {
  Tensor x = in({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor out = in({0, 0, 0}, {3});
  {
    test_util::WarningCapture warnings;
    opd::sum_out(out, x, {1});
    EXPECT_EQ(warnings.messages(),
              (std::vector<std::string>{test_util::resized_out_warning("[3]", "[2]")}));
  }
  EXPECT_TRUE(tensors_equal(out, ex({6, 15}, {2})));
  // A transposed out: the contiguous result is copied into it.
  Tensor base = in({0, 0, 0, 0, 0, 0}, {3, 2});
  Tensor target = base.t();  // [2, 3], strides [1, 2]
  opd::amax_out(target, x.view({2, 3, 1}), {2});
  EXPECT_TRUE(tensors_equal(target, x));
  EXPECT_TRUE(tensors_equal(base, ex({1, 4, 2, 5, 3, 6}, {3, 2})));
}

// ---- Operators I: prod, min, max(), all/any, var/std, norms, count_nonzero, nansum -----------

TEST_P(ReductionOps, ProdWithZerosAndIntegersAsPyTorch) {
  EXPECT_TRUE(tensors_equal(opd::prod(in({1, 2, 3, 4}, {2, 2})), ex({24}, {})));
  EXPECT_TRUE(tensors_equal(opd::prod(in({1, 2, 3, 4}, {2, 2}), 0), ex({3, 8}, {2})));
  EXPECT_TRUE(tensors_equal(opd::prod(in({3, 5}, {2}, kByte)), ex({15}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::prod(in({}, {0, 2}), 0, true), ex({1, 1}, {1, 2})));
  EXPECT_EQ(error_of_type<Error>([&] { opd::prod(in({1}, {1}, kHalf)); }),
            "\"prod_cpu\" not implemented for 'Half'");
}

TEST_P(ReductionOps, MinDimAndMaxMinOverEveryElement) {
  auto [values, indices] = opd::min(in({3, 1, 1, 2, kNaN, 0}, {2, 3}), 1);
  EXPECT_TRUE(tensors_equal(values, ex({1, kNaN}, {2})));
  EXPECT_TRUE(tensors_equal(indices, ex({1, 1}, {2}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::max(in({1, 7, 3}, {3})), ex({7}, {})));
  EXPECT_TRUE(tensors_equal(opd::min(in({1, kNaN, -3}, {3})), ex({kNaN}, {})));
  EXPECT_TRUE(tensors_equal(opd::argmin(in({2, 1, 1}, {3})), ex({1}, {}, kLong)));
  Tensor e = opd::empty({0, 3}, TensorOptions().dtype(kFloat).device(GetParam()));
  EXPECT_EQ(error_of_type<Error>([&] { opd::max(e); }),
            "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.");
}

TEST_P(ReductionOps, AllAnyAreBoolOrUInt8ForUInt8) {
  EXPECT_TRUE(tensors_equal(opd::all(in({1, 0, 2, 3}, {2, 2})), ex({0}, {}, kBool)));
  EXPECT_TRUE(tensors_equal(opd::any(in({0, 0, 2, 0}, {2, 2}), 1), ex({0, 1}, {2}, kBool)));
  EXPECT_TRUE(tensors_equal(opd::all(in({1, 2}, {2}, kByte)), ex({1}, {}, kByte)));
  EXPECT_TRUE(tensors_equal(opd::all(in({}, {2, 0}), 1), ex({1, 1}, {2}, kBool)));
}

TEST_P(ReductionOps, VarStdAndTheirMeans) {
  Tensor x = in({1, 2, 4, 3, 5, 7}, {2, 3});
  EXPECT_TRUE(tensors_equal(opd::var(x, IntArrayRef{1}, 1, false), ex({7.0 / 3, 4}, {2}), 1e-5));
  EXPECT_TRUE(tensors_equal(opd::std(x, IntArrayRef{0}, 0, true), ex({1, 1.5, 1.5}, {1, 3})));
  auto [v, m] = opd::var_mean(x, std::nullopt, 1, false);
  EXPECT_TRUE(tensors_equal(v, ex({14.0 / 3}, {}), 1e-5));
  EXPECT_TRUE(tensors_equal(m, ex({11.0 / 3}, {}), 1e-5));
  EXPECT_TRUE(tensors_equal(opd::var(in({1}, {1}), std::nullopt, 1, false), ex({kNaN}, {})));
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::var(in({1, 2}, {2}, kLong), std::nullopt, 1, false);
            }),
            "std and var only support floating point and complex dtypes");
}

TEST_P(ReductionOps, VectorNormsOfEveryOrder) {
  Tensor x = in({3, -4, 0}, {3});
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x), ex({5}, {})));
  EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x, 1), ex({7}, {})));
  EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x, 0), ex({2}, {})));
  EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x, inf), ex({4}, {})));
  EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x, -inf), ex({0}, {})));
  EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x, 3), ex({std::cbrt(91.0)}, {}), 1e-5));
  EXPECT_TRUE(tensors_equal(opd::norm(x), ex({5}, {})));
}

TEST_P(ReductionOps, CountNonzeroAndNansum) {
  Tensor x = in({1, 0, kNaN, 0, 2, 0}, {2, 3});
  EXPECT_TRUE(tensors_equal(opd::count_nonzero(x, IntArrayRef{}), ex({3}, {}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::count_nonzero(x, IntArrayRef{0}), ex({1, 1, 1}, {3}, kLong)));
  EXPECT_TRUE(tensors_equal(opd::nansum(x), ex({3}, {})));
  EXPECT_TRUE(tensors_equal(opd::nansum(x, IntArrayRef{1}), ex({1, 2}, {2})));
  // A floating input into an integer dtype: a NaN has no integer value, and PyTorch's CPU
  // kernel has floating loops only (Meta refuses it as the CPU does).
  EXPECT_EQ(error_of_type<Error>([&] { opd::nansum(x, OptionalIntArrayRef(), false, kLong); }),
            "\"nansum_cpu\" not implemented for 'Long'");
  // An integer input's nansum is its sum, into int64.
  Tensor i = in({1, 2, 3, 4, 5, 6}, {2, 3}, kInt);
  EXPECT_TRUE(tensors_equal(opd::nansum(i, IntArrayRef{1}), ex({6, 15}, {2}, kLong)));
}

// The vectorised loops (Note [Vectorised reductions]): every tail of the vector and column
// folds, against sums in double.
TEST_P(ReductionOps, VectorisedFoldsAgreeWithDoubleSums) {
  for (int64_t rows : {1, 3, 37, 130}) {
    for (int64_t cols : {1, 5, 33, 257, 1030}) {
      std::vector<double> v(static_cast<size_t>(rows * cols));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % 13) - 6;
      Tensor x = in(v, {rows, cols});
      std::vector<double> by_row(rows, 0), by_col(cols, 0), max_col(cols, -1e9);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const double e = v[static_cast<size_t>(r * cols + c)];
          by_row[r] += e;
          by_col[c] += e;
          max_col[c] = std::max(max_col[c], e);
        }
      }
      EXPECT_TRUE(tensors_equal(opd::sum(x, IntArrayRef{1}), ex(by_row, {rows}), 1e-3));
      EXPECT_TRUE(tensors_equal(opd::sum(x, IntArrayRef{0}), ex(by_col, {cols}), 1e-3));
      EXPECT_TRUE(tensors_equal(opd::amax(x, IntArrayRef{0}), ex(max_col, {cols})));
    }
  }
}

// The AVX2 loops (Note [AVX2 reductions]) in float and double: every length around the vector
// and the eight-vector step, a NaN in every lane position, ties (the first index wins), and the
// strided and outer-dim runs, against references computed here. 98309 elements split into
// pieces over the threads (Note [Reduction pieces]).
TEST_P(ReductionOps, Avx2FoldsAgreeWithScalarReferences) {
  for (ScalarType dt : {kFloat, kDouble}) {
    for (int64_t n : {0,  1,  2,  3,  4,  5,   7,   8,   9,    15,   16,   17,   31,   32,
                      33, 63, 64, 65, 66, 127, 128, 129, 1023, 1024, 1025, 2049, 98309}) {
      SCOPED_TRACE(testing::Message() << "n = " << n << ", dtype " << dt);
      // Small integers: every sum is exact in either dtype and in any order.
      std::vector<double> v(static_cast<size_t>(n)), signs(v.size());
      double sum = 0, sum_sq = 0, sum_abs = 0, prod = 1;
      for (size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<double>((i * 7919) % 13) - 6;
        signs[i] = i % 3 == 0 ? -1 : 1;
        sum += v[i];
        sum_sq += v[i] * v[i];
        sum_abs += std::abs(v[i]);
        prod *= signs[i];
      }
      Tensor x = in(v, {n}, dt);
      EXPECT_TRUE(tensors_equal(opd::sum(x), ex({sum}, {}, dt)));
      EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x, 1), ex({sum_abs}, {}, dt)));
      EXPECT_TRUE(tensors_equal(opd::linalg_vector_norm(x), ex({std::sqrt(sum_sq)}, {}, dt), 1e-6));
      EXPECT_TRUE(tensors_equal(opd::prod(in(signs, {n}, dt)), ex({prod}, {}, dt)));
      if (n == 0) continue;
      const auto hi = std::max_element(v.begin(), v.end()),
                 lo = std::min_element(v.begin(), v.end());
      EXPECT_TRUE(tensors_equal(opd::amax(x), ex({*hi}, {}, dt)));
      EXPECT_TRUE(tensors_equal(opd::min(x), ex({*lo}, {}, dt)));
      // max_element / min_element give the first of equal elements, as argmax must.
      EXPECT_TRUE(tensors_equal(opd::argmax(x), ex({double(hi - v.begin())}, {}, kLong)));
      EXPECT_TRUE(tensors_equal(opd::argmin(x), ex({double(lo - v.begin())}, {}, kLong)));
      if (n > 130) continue;
      for (int64_t pos = 0; pos < n; ++pos) {
        std::vector<double> w = v;
        w[static_cast<size_t>(pos)] = kNaN;
        if (pos + 9 < n) w[static_cast<size_t>(pos + 9)] = kNaN;
        Tensor y = in(w, {n}, dt);
        EXPECT_TRUE(tensors_equal(opd::amax(y), ex({kNaN}, {}, dt))) << pos;
        EXPECT_TRUE(tensors_equal(opd::amin(y), ex({kNaN}, {}, dt))) << pos;
        EXPECT_TRUE(tensors_equal(opd::max(y), ex({kNaN}, {}, dt))) << pos;
        EXPECT_TRUE(tensors_equal(opd::argmax(y), ex({double(pos)}, {}, kLong))) << pos;
        EXPECT_TRUE(tensors_equal(opd::argmin(y), ex({double(pos)}, {}, kLong))) << pos;
      }
    }
    // Outer-dim (columns, four rows at once, kFoldRows) and strided runs, with NaNs in some
    // columns; any / all with a zero column, a -0 and NaN.
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 9},
                              {37, 1},
                              {37, 7},
                              {37, 8},
                              {37, 33},
                              {37, 257},
                              {130, 17}}) {
      SCOPED_TRACE(testing::Message() << rows << "x" << cols << ", dtype " << dt);
      std::vector<double> v(static_cast<size_t>(rows * cols));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % 13) - 6;
      for (int64_t c = 3; c < cols; c += 5)
        v[static_cast<size_t>(((c * 11) % rows) * cols + c)] = kNaN;
      std::vector<double> sum(cols, 0), hi(cols, -1e9), lo(cols, 1e9);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const double e = v[static_cast<size_t>(r * cols + c)];
          sum[c] += e;
          hi[c] = std::isnan(e) || std::isnan(hi[c]) ? kNaN : std::max(hi[c], e);
          lo[c] = std::isnan(e) || std::isnan(lo[c]) ? kNaN : std::min(lo[c], e);
        }
      }
      Tensor x = in(v, {rows, cols}, dt);
      for (Tensor t : {x, x.t().contiguous().t()}) {
        EXPECT_TRUE(tensors_equal(opd::sum(t, IntArrayRef{0}), ex(sum, {cols}, dt)));
        EXPECT_TRUE(tensors_equal(opd::amax(t, IntArrayRef{0}), ex(hi, {cols}, dt)));
        EXPECT_TRUE(tensors_equal(opd::amin(t, IntArrayRef{0}), ex(lo, {cols}, dt)));
        EXPECT_TRUE(tensors_equal(opd::amax(t.t(), IntArrayRef{1}), ex(hi, {cols}, dt)));
      }
      // Column c: zero but for a NaN (c % 4 == 1), a -0 (c % 4 == 2) or a 1 (c % 4 == 3) in one
      // row; the row of index 1 is all ones.
      std::vector<double> z(v.size(), 0);
      std::vector<double> any(cols, 0), all(cols, 0);
      for (int64_t c = 0; c < cols; ++c) {
        const double e = c % 4 == 1 ? kNaN : c % 4 == 2 ? -0.0 : c % 4 == 3 ? 1 : 0;
        z[static_cast<size_t>(((c * 5) % rows) * cols + c)] = e;
        any[c] = e != 0 || std::isnan(e) || rows > 1;
        all[c] = rows == 1 && (e != 0 || std::isnan(e));
        if (rows > 1) z[static_cast<size_t>(cols + c)] = 1;
      }
      Tensor y = in(z, {rows, cols}, dt);
      EXPECT_TRUE(tensors_equal(opd::any(y, 0), ex(any, {cols}, kBool)));
      EXPECT_TRUE(tensors_equal(opd::all(y, 0), ex(all, {cols}, kBool)));
      EXPECT_TRUE(tensors_equal(opd::all(opd::add(y, 2), 0),
                                ex(std::vector<double>(cols, 1), {cols}, kBool)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ReductionOps, ::testing::ValuesIn(op_test_devices()),
                         [](const auto& info) {
                           std::string name = info.param.str();
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace opd::test
