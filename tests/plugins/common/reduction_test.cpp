#include "common/reduction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "error_text.h"
#include "opd/error.h"

namespace opd::common {
namespace {

using test_util::error_text;
using Ints = std::vector<int64_t>;

// A Meta tensor: metadata only, which is all these functions read.
Tensor meta(const Ints& sizes, ScalarType dtype = kFloat) {
  return from_blob(nullptr, sizes, contiguous_strides(sizes), dtype, Device(DeviceType::Meta));
}

Ints dims_of(const DimMask& mask, int64_t ndim) {
  Ints out;
  for (int64_t d = 0; d < ndim; ++d)
    if (mask.test(d)) out.push_back(d);
  return out;
}

// ---- dim lists ----------------------------------------------------------------------------------

TEST(Reduction, DimMaskWrapsNegativeDims) {
  EXPECT_EQ(dims_of(make_dim_mask(Ints{-1, 0}, 3), 3), (Ints{0, 2}));
  EXPECT_EQ(dims_of(make_dim_mask(Ints{1}, 2), 2), (Ints{1}));
}

TEST(Reduction, NoDimsOrEmptyListMeansEveryDim) {
  EXPECT_EQ(dims_of(make_dim_mask(std::nullopt, 3), 3), (Ints{0, 1, 2}));
  EXPECT_EQ(dims_of(make_dim_mask(Ints{}, 2), 2), (Ints{0, 1}));
  EXPECT_EQ(make_dim_mask(std::nullopt, 0).count(), 0u);
}

TEST(Reduction, ScalarAcceptsDimZeroAndMinusOne) {
  EXPECT_EQ(sum_meta(meta({}), Ints{0}, true, std::nullopt).sizes, (Ints{}));
  EXPECT_EQ(sum_meta(meta({}), Ints{-1}, false, std::nullopt).sizes, (Ints{}));
  EXPECT_EQ(error_text<IndexError>([] { make_dim_mask(Ints{1}, 0); }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST(Reduction, DimListErrors) {
  EXPECT_EQ(error_text<IndexError>([] { make_dim_mask(Ints{2}, 2); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(error_text<Error>([] {
              make_dim_mask(Ints{0, -2}, 2);
            }),
            "dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(error_text<Error>([] {
              make_dim_mask(Ints{1, 1}, 3);
            }),
            "dim 1 appears multiple times in the list of dims");
}

TEST(Reduction, ReducedSizesDropOrKeepDims) {
  const DimMask mask = make_dim_mask(Ints{0, 2}, 3);
  EXPECT_EQ(reduced_sizes(Ints{2, 3, 4}, mask, false), (Ints{3}));
  EXPECT_EQ(reduced_sizes(Ints{2, 3, 4}, mask, true), (Ints{1, 3, 1}));
  EXPECT_EQ(reduced_sizes(Ints{}, make_dim_mask(std::nullopt, 0), true), (Ints{}));
}

// ---- dtype rules --------------------------------------------------------------------------------

TEST(Reduction, SumPromotesIntegralAndBoolToLong) {
  for (ScalarType t : {kBool, kByte, kChar, kShort, kInt, kLong}) {
    EXPECT_EQ(sum_meta(meta({2}, t), std::nullopt, false, std::nullopt).dtype, kLong) << t;
  }
  EXPECT_EQ(sum_meta(meta({2}, kFloat), std::nullopt, false, std::nullopt).dtype, kFloat);
  EXPECT_EQ(sum_meta(meta({2}, kComplexFloat), std::nullopt, false, std::nullopt).dtype,
            kComplexFloat);
  EXPECT_EQ(sum_meta(meta({2}, kInt), std::nullopt, false, kInt).dtype, kInt);
  EXPECT_EQ(sum_meta(meta({2}, kFloat), std::nullopt, false, kDouble).dtype, kDouble);
}

TEST(Reduction, SumShapes) {
  EXPECT_EQ(sum_meta(meta({2, 3}), std::nullopt, false, std::nullopt).sizes, (Ints{}));
  EXPECT_EQ(sum_meta(meta({2, 3}), Ints{1}, false, std::nullopt).sizes, (Ints{2}));
  EXPECT_EQ(sum_meta(meta({2, 3}), Ints{-1}, true, std::nullopt).sizes, (Ints{2, 1}));
  EXPECT_EQ(sum_meta(meta({2, 3}), Ints{}, true, std::nullopt).sizes, (Ints{1, 1}));
  EXPECT_EQ(sum_meta(meta({0, 3}), Ints{0}, false, std::nullopt).sizes, (Ints{3}));
}

TEST(Reduction, MeanNeedsFloatingOrComplex) {
  EXPECT_EQ(mean_meta(meta({2}, kFloat), std::nullopt, false, std::nullopt).dtype, kFloat);
  EXPECT_EQ(mean_meta(meta({2}, kComplexDouble), std::nullopt, false, std::nullopt).dtype,
            kComplexDouble);
  EXPECT_EQ(mean_meta(meta({2}, kLong), std::nullopt, false, kDouble).dtype, kDouble);
  EXPECT_EQ(error_text<Error>([] { mean_meta(meta({2}, kLong), std::nullopt, false, {}); }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            "or complex dtype. Got: Long");
  EXPECT_EQ(error_text<Error>([] { mean_meta(meta({2}, kInt), Ints{0}, false, {}); }),
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            "or complex dtype. Got: Int");
  EXPECT_EQ(error_text<Error>([] { mean_meta(meta({2}, kFloat), std::nullopt, false, kInt); }),
            "mean(): could not infer output dtype. Optional dtype must be either a floating "
            "point or complex dtype. Got: Int");
}

TEST(Reduction, AmaxKeepsDtypeAndNeedsNonEmptyReducedDims) {
  ReductionMeta m = amax_meta("amax", meta({2, 3}, kInt), Ints{0}, true);
  EXPECT_EQ(m.dtype, kInt);
  EXPECT_EQ(m.sizes, (Ints{1, 3}));
  EXPECT_EQ(amax_meta("amin", meta({2, 3}), Ints{}, false).sizes, (Ints{}));
  // An empty input reduces fine over dims of non-zero size.
  EXPECT_EQ(amax_meta("amax", meta({0, 3}), Ints{1}, false).sizes, (Ints{0}));
  EXPECT_EQ(error_text<IndexError>([] {
              amax_meta("amax", meta({0, 3}), Ints{0}, false);
            }),
            "amax(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_text<IndexError>([] {
              amax_meta("amin", meta({3, 0}), Ints{-1}, false);
            }),
            "amin(): Expected reduction dim -1 to have non-zero size.");
  EXPECT_EQ(error_text<Error>([] {
              amax_meta("amax", meta({0, 3}), Ints{}, false);
            }),
            "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.");
  EXPECT_EQ(error_text<Error>([] { amax_meta("amax", meta({2}, kComplexFloat), Ints{}, 0); }),
            "\"max_values_cpu\" not implemented for 'ComplexFloat'");
}

TEST(Reduction, ArgmaxIsLongAndRejectsEmpty) {
  ReductionMeta all = argmax_meta(meta({2, 3}), std::nullopt, false);
  EXPECT_EQ(all.dtype, kLong);
  EXPECT_EQ(all.sizes, (Ints{}));
  EXPECT_EQ(argmax_meta(meta({2, 3}), std::nullopt, true).sizes, (Ints{1, 1}));
  EXPECT_EQ(argmax_meta(meta({2, 3}), -1, false).sizes, (Ints{2}));
  EXPECT_EQ(argmax_meta(meta({}), 0, true).sizes, (Ints{}));
  EXPECT_EQ(error_text<IndexError>([] {
              argmax_meta(meta({0, 3}), std::nullopt, false);
            }),
            "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  EXPECT_EQ(error_text<IndexError>([] {
              argmax_meta(meta({0, 3}), -2, false);
            }),
            "argmax(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_text<Error>([] { argmax_meta(meta({2}, kBool), 0, false); }),
            "\"argmax_cpu\" not implemented for 'Bool'");
}

TEST(Reduction, MaxDimShapesAndErrors) {
  ReductionMeta m = max_dim_meta(meta({2, 3}, kDouble), 1, false);
  EXPECT_EQ(m.dtype, kDouble);
  EXPECT_EQ(m.sizes, (Ints{2}));
  EXPECT_EQ(max_dim_meta(meta({2, 3}), 0, true).sizes, (Ints{1, 3}));
  EXPECT_EQ(max_dim_meta(meta({2, 0}), 0, false).sizes, (Ints{0}));
  EXPECT_EQ(error_text<IndexError>([] {
              max_dim_meta(meta({2, 0}), 1, false);
            }),
            "max(): Expected reduction dim 1 to have non-zero size.");
  EXPECT_EQ(error_text<IndexError>([] {
              max_dim_meta(meta({2, 3}), 2, false);
            }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(error_text<Error>([] { max_dim_meta(meta({2}, kComplexDouble), 0, false); }),
            "max(): does not support complex input");
}

// ---- geometry -----------------------------------------------------------------------------------

// Every (output, element) pair the plan visits, as input offsets grouped by output.
std::vector<Ints> visit(const ReductionPlan& plan) {
  std::vector<Ints> out;
  for (int64_t o = 0; o < plan.num_outputs; ++o) {
    Ints offsets;
    int64_t expected_first = 0;
    for_each_reduced_row(plan, input_offset(plan, o),
                         [&](int64_t offset, int64_t n, int64_t stride, int64_t first) {
                           EXPECT_EQ(first, expected_first);
                           expected_first += n;
                           for (int64_t k = 0; k < n; ++k) offsets.push_back(offset + k * stride);
                         });
    out.push_back(offsets);
  }
  return out;
}

TEST(Reduction, PlanCoalescesContiguousReducedDims) {
  ReductionPlan plan =
      make_reduction_plan(Ints{2, 3, 4}, Ints{12, 4, 1}, make_dim_mask(Ints{1, 2}, 3));
  EXPECT_EQ(plan.num_outputs, 2);
  EXPECT_EQ(plan.reduced_numel, 12);
  EXPECT_EQ(plan.reduced_sizes, (Ints{12}));
  EXPECT_EQ(plan.reduced_strides, (Ints{1}));
  EXPECT_EQ(plan.kept_sizes, (Ints{2}));
  EXPECT_EQ(visit(plan)[1].front(), 12);
}

TEST(Reduction, PlanVisitsOuterReductionInRowMajorOrder) {
  // Reduce dims 0 and 2 of a contiguous [2, 3, 2]: output j reads j*2 + {0, 1, 6, 7}.
  ReductionPlan plan =
      make_reduction_plan(Ints{2, 3, 2}, Ints{6, 2, 1}, make_dim_mask(Ints{0, 2}, 3));
  EXPECT_EQ(plan.num_outputs, 3);
  EXPECT_EQ(visit(plan), (std::vector<Ints>{{0, 1, 6, 7}, {2, 3, 8, 9}, {4, 5, 10, 11}}));
}

TEST(Reduction, PlanFollowsStridesOfATransposedInput) {
  // The transpose of a contiguous [3, 2] (sizes [2, 3], strides [1, 2]), reduced over dim 1.
  ReductionPlan plan = make_reduction_plan(Ints{2, 3}, Ints{1, 2}, make_dim_mask(Ints{1}, 2));
  EXPECT_EQ(visit(plan), (std::vector<Ints>{{0, 2, 4}, {1, 3, 5}}));
}

TEST(Reduction, PlanDropsSizeOneDimsAndHandlesEmpty) {
  ReductionPlan plan = make_reduction_plan(Ints{1, 4, 1}, Ints{9, 1, 7}, make_dim_mask({}, 3));
  EXPECT_EQ(plan.reduced_sizes, (Ints{4}));
  EXPECT_EQ(visit(plan), (std::vector<Ints>{{0, 1, 2, 3}}));

  ReductionPlan empty = make_reduction_plan(Ints{3, 0}, Ints{1, 1}, make_dim_mask(Ints{1}, 2));
  EXPECT_EQ(empty.num_outputs, 3);
  EXPECT_EQ(empty.reduced_numel, 0);
  EXPECT_EQ(visit(empty), (std::vector<Ints>{{}, {}, {}}));

  ReductionPlan scalar = make_reduction_plan(Ints{}, Ints{}, make_dim_mask(std::nullopt, 0));
  EXPECT_EQ(visit(scalar), (std::vector<Ints>{{0}}));
}

TEST(Reduction, PlanWalksExpandedDims) {
  // An expanded [3, 4] (stride 0 on dim 0), reduced over dim 0: each output reads one element 3x.
  ReductionPlan plan = make_reduction_plan(Ints{3, 4}, Ints{0, 1}, make_dim_mask(Ints{0}, 2));
  EXPECT_EQ(visit(plan)[2], (Ints{2, 2, 2}));
}

TEST(Reduction, PairwiseSumIsAccurate) {
  // 10^6 copies of 0.1f summed in double: a float accumulator would be off by ~1%.
  std::vector<float> v(1000000, 0.1f);
  const double s = pairwise_sum<double>(v.data(), static_cast<int64_t>(v.size()), 1,
                                        [](float x) { return static_cast<double>(x); });
  EXPECT_NEAR(s, 1000000 * static_cast<double>(0.1f), 1e-6);
  // Strided: every other element of 1, 2, ..., 200.
  std::vector<double> w(200);
  for (int i = 0; i < 200; ++i) w[i] = i + 1;
  EXPECT_EQ(pairwise_sum<double>(w.data(), 100, 2, [](double x) { return x; }), 10000.0);
}

}  // namespace
}  // namespace opd::common
