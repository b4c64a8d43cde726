// Factories through the typed API: empty, empty_strided, zeros, ones, full, arange, rand, randn,
// scalar_tensor and the *_like family, against PyTorch 1.13's results and messages; the version
// they start at; resize_ and storages that are not resizable.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "error_text.h"
#include "op_test_util.h"
#include "opd/generator.h"
#include "opd/ops.h"

namespace opd {
namespace {

using test::sizes;
using test::strides;
using test::tensors_equal;
using test::values;
using test_util::error_text;
using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

class FactoryOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  Device dev() const { return GetParam(); }
  TensorOptions opts(ScalarType dtype = kFloat) const {
    return TensorOptions().dtype(dtype).device(dev());
  }
  Tensor make(const Doubles& v, const Ints& shape, ScalarType dtype = kFloat) const {
    return test::tensor(v, shape, dtype, dev());
  }
};

// ---- empty / empty_strided ----------------------------------------------------------------------

TEST_P(FactoryOps, EmptyIsContiguousFloatOnTheRequestedDevice) {
  Tensor x = empty({2, 3}, TensorOptions().device(dev()));
  EXPECT_EQ(sizes(x), (Ints{2, 3}));
  EXPECT_EQ(strides(x), (Ints{3, 1}));
  EXPECT_EQ(x.scalar_type(), kFloat);
  EXPECT_EQ(x.device().type, dev().type);
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_EQ(x.storage_offset(), 0);
  EXPECT_GE(x.storage().nbytes(), 6 * sizeof(float));

  Tensor y = empty({4}, opts(kLong));
  EXPECT_EQ(y.scalar_type(), kLong);
  EXPECT_GE(y.storage().nbytes(), 4 * sizeof(int64_t));
}

TEST_P(FactoryOps, EmptyWithZeroSizeAndZeroDims) {
  Tensor none = empty({2, 0}, opts());
  EXPECT_EQ(sizes(none), (Ints{2, 0}));
  EXPECT_EQ(none.numel(), 0);
  Tensor scalar = empty(IntArrayRef{}, opts());
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
}

TEST_P(FactoryOps, EmptyStridedKeepsTheStrides) {
  Tensor x = empty_strided({2, 3}, {1, 2}, opts());
  EXPECT_EQ(sizes(x), (Ints{2, 3}));
  EXPECT_EQ(strides(x), (Ints{1, 2}));
  EXPECT_FALSE(x.is_contiguous());
  EXPECT_GE(x.storage().nbytes(), 6 * sizeof(float));

  // Padding between rows: the storage reaches the last element (1 * 4 + 2 = 6, 7 elements).
  Tensor padded = empty_strided({2, 3}, {4, 1}, opts(kDouble));
  EXPECT_EQ(strides(padded), (Ints{4, 1}));
  EXPECT_GE(padded.storage().nbytes(), 7 * sizeof(double));
}

TEST_P(FactoryOps, EmptyStridedRejectsMismatchedLengths) {
  EXPECT_EQ(test::error_of([&] {
              empty_strided({2, 3}, {1}, opts());
            }),
            "dimensionality of sizes (2) must match dimensionality of strides (1)");
}

TEST_P(FactoryOps, NegativeDimensionIsRefusedByEveryFactory) {
  EXPECT_EQ(test::error_of([&] {
              empty({-1, 2}, opts());
            }),
            "Trying to create tensor with negative dimension -1: [-1, 2]");
  EXPECT_EQ(test::error_of([&] {
              zeros({2, -3}, opts());
            }),
            "Trying to create tensor with negative dimension -3: [2, -3]");
  EXPECT_EQ(test::error_of([&] { ones({-2}, opts()); }),
            "Trying to create tensor with negative dimension -2: [-2]");
  EXPECT_EQ(test::error_of([&] {
              full({3, -1}, 1.5, opts());
            }),
            "Trying to create tensor with negative dimension -1: [3, -1]");
  EXPECT_EQ(test::error_of([&] { empty_strided({-1}, {1}, opts()); }),
            "Trying to create tensor with negative dimension -1: [-1]");
  EXPECT_EQ(test::error_of([&] {
              rand({2, -5}, opts());
            }),
            "Trying to create tensor with negative dimension -5: [2, -5]");
}

// ---- zeros / ones / full ------------------------------------------------------------------------

TEST_P(FactoryOps, ZerosAndOnesInEachDtype) {
  EXPECT_TRUE(tensors_equal(zeros({2, 2}, opts()), make({0, 0, 0, 0}, {2, 2})));
  EXPECT_TRUE(tensors_equal(ones({3}, opts(kInt)), make({1, 1, 1}, {3}, kInt)));
  EXPECT_TRUE(tensors_equal(ones({2}, opts(kBool)), make({1, 1}, {2}, kBool)));
  EXPECT_TRUE(tensors_equal(zeros({2}, opts(kByte)), make({0, 0}, {2}, kByte)));
  EXPECT_TRUE(tensors_equal(ones({1, 2}, opts(kDouble)), make({1, 1}, {1, 2}, kDouble)));
  // No dtype: PyTorch's default, Float.
  EXPECT_EQ(zeros({1}, TensorOptions().device(dev())).scalar_type(), kFloat);
  EXPECT_EQ(ones(IntArrayRef{}, opts()).dim(), 0);
}

TEST_P(FactoryOps, FullInfersItsDtypeFromTheFillValue) {
  // PyTorch 1.13: an integer fill gives Long, a bool fill Bool, a float fill the default dtype.
  Tensor from_int = full({2, 2}, 7, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(from_int, make({7, 7, 7, 7}, {2, 2}, kLong)));
  Tensor from_bool = full({2}, true, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(from_bool, make({1, 1}, {2}, kBool)));
  Tensor from_double = full({3}, 2.5, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(from_double, make({2.5, 2.5, 2.5}, {3}, kFloat)));
}

TEST_P(FactoryOps, FullWithAnExplicitDtypeConvertsTheValue) {
  EXPECT_TRUE(tensors_equal(full({2}, 2.5, opts(kInt)), make({2, 2}, {2}, kInt)));
  EXPECT_TRUE(tensors_equal(full({2}, 3, opts(kDouble)), make({3, 3}, {2}, kDouble)));
  EXPECT_TRUE(tensors_equal(full({2}, -1.75, opts(kDouble)), make({-1.75, -1.75}, {2}, kDouble)));
}

// ---- arange -------------------------------------------------------------------------------------

TEST_P(FactoryOps, ArangeOfIntegersIsLong) {
  EXPECT_TRUE(tensors_equal(arange(0, 5, 1, opts(kLong)), make({0, 1, 2, 3, 4}, {5}, kLong)));
  Tensor inferred = arange(0, 5, 1, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(inferred, make({0, 1, 2, 3, 4}, {5}, kLong)));
  EXPECT_TRUE(tensors_equal(arange(0, 10, 3, TensorOptions().device(dev())),
                            make({0, 3, 6, 9}, {4}, kLong)));
}

TEST_P(FactoryOps, ArangeWithAFloatingBoundOrStepIsFloat) {
  Tensor quarters = arange(0, 1, 0.25, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(quarters, make({0, 0.25, 0.5, 0.75}, {4}, kFloat)));
  Tensor from_float_start = arange(0.0, 3, 1, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(from_float_start, make({0, 1, 2}, {3}, kFloat)));
  // Length ceil((1 - 0) / 0.3) = 4.
  Tensor tenths = arange(0, 1, 0.3, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(tenths, make({0, 0.3, 0.6, 0.9}, {4}, kFloat)));
  // arange(-1, 1, 0.1) has 20 elements in PyTorch.
  EXPECT_EQ(arange(-1, 1, 0.1, TensorOptions().device(dev())).numel(), 20);
}

TEST_P(FactoryOps, ArangeTakesAnExplicitDtype) {
  EXPECT_TRUE(tensors_equal(arange(0, 5, 2, opts(kInt)), make({0, 2, 4}, {3}, kInt)));
  EXPECT_TRUE(tensors_equal(arange(0, 3, 1, opts(kDouble)), make({0, 1, 2}, {3}, kDouble)));
  EXPECT_TRUE(tensors_equal(arange(1, 4, 1, opts(kByte)), make({1, 2, 3}, {3}, kByte)));
}

TEST_P(FactoryOps, ArangeCountsDownWithANegativeStep) {
  Tensor down = arange(5, 0, -2, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(down, make({5, 3, 1}, {3}, kLong)));
  Tensor down_float = arange(1, 0, -0.3, TensorOptions().device(dev()));
  EXPECT_TRUE(tensors_equal(down_float, make({1, 0.7, 0.4, 0.1}, {4}, kFloat)));
}

TEST_P(FactoryOps, ArangeOfAnEmptyRangeHasNoElements) {
  Tensor none = arange(3, 3, 1, TensorOptions().device(dev()));
  EXPECT_EQ(sizes(none), (Ints{0}));
  EXPECT_EQ(none.scalar_type(), kLong);
}

TEST_P(FactoryOps, ArangeErrors) {
  EXPECT_EQ(test::error_of([&] { arange(0, 10, 0, opts()); }), "step must be nonzero");
  EXPECT_EQ(test::error_of([&] { arange(0, 10, -1, opts()); }),
            "upper bound and larger bound inconsistent with step sign");
  EXPECT_EQ(test::error_of([&] { arange(10, 0, 1, opts()); }),
            "upper bound and larger bound inconsistent with step sign");
  EXPECT_EQ(test::error_of([&] { arange(0, INFINITY, 1, opts()); }), "unsupported range: 0 -> inf");
  EXPECT_THAT(error_text<Error>([&] { arange(0, 3, 1, opts(kBool)); }),
              ::testing::HasSubstr("not implemented for 'Bool'"));
}

// ---- rand / randn -------------------------------------------------------------------------------

TEST_P(FactoryOps, RandIsReproducibleUnderTheSameSeed) {
  manual_seed(42);
  Tensor a = rand({1000}, opts());
  manual_seed(42);
  Tensor b = rand({1000}, opts());
  EXPECT_EQ(a.scalar_type(), kFloat);
  EXPECT_EQ(sizes(a), (Ints{1000}));
  EXPECT_EQ(values(a), values(b));

  manual_seed(43);
  Tensor c = rand({1000}, opts());
  EXPECT_NE(values(a), values(c));
  // The state advances: the next draw under seed 42 is not the first one again.
  manual_seed(42);
  rand({1000}, opts());
  Tensor d = rand({1000}, opts());
  EXPECT_NE(values(a), values(d));
}

TEST_P(FactoryOps, RandIsUniformOnZeroOne) {
  manual_seed(7);
  for (ScalarType dtype : {kFloat, kDouble}) {
    Tensor x = rand({4000}, opts(dtype));
    EXPECT_EQ(x.scalar_type(), dtype);
    double sum = 0, lo = 1, hi = 0;
    int below_tenth = 0;
    for (double v : values(x)) {
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0);
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      below_tenth += v < 0.1;
    }
    EXPECT_NEAR(sum / 4000, 0.5, 0.03) << dtype;
    EXPECT_LT(lo, 0.01);
    EXPECT_GT(hi, 0.99);
    EXPECT_NEAR(below_tenth, 400, 80);
  }
}

TEST_P(FactoryOps, RandnIsStandardNormalAndReproducible) {
  manual_seed(123);
  Tensor a = randn({2, 5000}, opts());
  manual_seed(123);
  Tensor b = randn({2, 5000}, opts());
  EXPECT_EQ(sizes(a), (Ints{2, 5000}));
  EXPECT_EQ(values(a), values(b));
  double sum = 0, sq = 0;
  int within_one = 0;
  for (double v : values(a)) {
    sum += v;
    sq += v * v;
    within_one += std::abs(v) < 1.0;
  }
  const double mean = sum / 10000, var = sq / 10000 - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(var, 1.0, 0.06);
  EXPECT_NEAR(within_one / 10000.0, 0.6827, 0.02);
}

TEST_P(FactoryOps, RandOfAnIntegerDtypeIsARuntimeError) {
  EXPECT_THAT(error_text<Error>([&] { rand({2}, opts(kLong)); }),
              ::testing::HasSubstr("not implemented for 'Long'"));
  EXPECT_THAT(error_text<Error>([&] { randn({2}, opts(kInt)); }),
              ::testing::HasSubstr("not implemented for 'Int'"));
}

// ---- scalar_tensor / *_like ---------------------------------------------------------------------

TEST_P(FactoryOps, ScalarTensorIsZeroDimFloatByDefault) {
  Tensor s = scalar_tensor(3, TensorOptions().device(dev()));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.scalar_type(), kFloat);  // torch.scalar_tensor(3).dtype is float32
  EXPECT_FALSE(s.unsafe_get_impl()->is_wrapped_number());
  EXPECT_EQ(values(s), (Doubles{3}));
  EXPECT_TRUE(tensors_equal(scalar_tensor(2.5, opts(kDouble)), make({2.5}, {}, kDouble)));
  EXPECT_TRUE(tensors_equal(scalar_tensor(true, opts(kBool)), make({1}, {}, kBool)));
}

TEST_P(FactoryOps, LikeFactoriesKeepShapeDtypeAndDevice) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3}, kInt);
  Tensor e = empty_like(x);
  EXPECT_EQ(sizes(e), (Ints{2, 3}));
  EXPECT_EQ(e.scalar_type(), kInt);
  EXPECT_EQ(e.device(), x.device());
  EXPECT_FALSE(e.storage().is_same(x.storage()));
  EXPECT_TRUE(tensors_equal(zeros_like(x), make({0, 0, 0, 0, 0, 0}, {2, 3}, kInt)));
  EXPECT_TRUE(tensors_equal(ones_like(x), make({1, 1, 1, 1, 1, 1}, {2, 3}, kInt)));
  // full_like keeps self's dtype: 2.7 in an Int tensor is 2.
  EXPECT_TRUE(tensors_equal(full_like(x, 2.7), make({2, 2, 2, 2, 2, 2}, {2, 3}, kInt)));
  // Options override.
  EXPECT_TRUE(tensors_equal(ones_like(x, kDouble), make({1, 1, 1, 1, 1, 1}, {2, 3}, kDouble)));
  EXPECT_TRUE(tensors_equal(full_like(x, 2.7, kFloat),
                            make({2.7, 2.7, 2.7, 2.7, 2.7, 2.7}, {2, 3}, kFloat)));
}

TEST_P(FactoryOps, LikeFactoriesPreserveDenseStridesOnly) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  // A transposed tensor is dense: its layout is kept ((1, 3) in PyTorch).
  Tensor t = x.t();
  EXPECT_EQ(strides(empty_like(t)), (Ints{1, 3}));
  EXPECT_EQ(strides(zeros_like(t)), (Ints{1, 3}));
  // An expanded or strided-sliced tensor is not: the result is contiguous.
  Tensor expanded = make({1, 2, 3}, {3, 1}).expand({3, 4});
  EXPECT_EQ(strides(empty_like(expanded)), (Ints{4, 1}));
  Tensor every_other = make({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}).slice(1, 0, 4, 2);
  EXPECT_EQ(strides(empty_like(every_other)), (Ints{2, 1}));
  EXPECT_TRUE(tensors_equal(ones_like(every_other), make({1, 1, 1, 1}, {2, 2})));
}

// ---- versions: Note [Factory versions] in common/factory_shape.h
// ----------------------------------

// torch.ones(2)._version is 0: the factory's own fill or copy is not an in-place write.
void expect_new_tensors_at_version_zero(const TensorOptions& o, const Tensor& x) {
  const std::pair<const char*, Tensor> made[] = {
      {"empty", empty({2}, o)},
      {"empty_strided", empty_strided({2}, {1}, o)},
      {"zeros", zeros({2}, o)},
      {"ones", ones({2}, o)},
      {"full", full({2}, 7, o)},
      {"full(bool)", full({2}, true, o)},
      {"scalar_tensor", scalar_tensor(3, o)},
      {"arange", arange(0, 3, 1, o)},
      {"rand", rand({2}, o)},
      {"randn", randn({2}, o)},
      {"empty_like", empty_like(x)},
      {"zeros_like", zeros_like(x)},
      {"ones_like", ones_like(x)},
      {"full_like", full_like(x, 2)},
      {"clone", x.clone()},
      {"to(dtype)", x.to(kDouble)},
      {"_to_copy", _to_copy(x)},
      {"contiguous", x.t().contiguous()},
  };
  for (const auto& [what, t] : made) {
    EXPECT_EQ(t.version(), 0u) << what;
    Tensor view = t.view({-1});
    t.zero_();
    EXPECT_EQ(t.version(), 1u) << what << ": the first in-place write counts";
    EXPECT_EQ(view.version(), 1u) << what;
  }
}

TEST_P(FactoryOps, NewTensorsStartAtVersionZeroAsInPyTorch) {
  expect_new_tensors_at_version_zero(opts(), ones({2, 3}, opts()));
}

// ---- resize_: Note [Resizable storage] in opd/storage.h -----------------------------------------

TEST_P(FactoryOps, ResizeGrowsAResizableTensorOntoANewStorageWithItsValues) {
  Tensor t = make({1, 2, 3, 4}, {4});
  Tensor view = t.view({2, 2});
  t.resize_({6});
  EXPECT_EQ(sizes(t), (Ints{6}));
  EXPECT_FALSE(t.storage().is_same(view.storage()));
  EXPECT_TRUE(tensors_equal(t.slice(0, 0, 4), make({1, 2, 3, 4}, {4})));
  EXPECT_TRUE(tensors_equal(view, make({1, 2, 3, 4}, {2, 2})));
}

TEST_P(FactoryOps, ResizeRefusesToGrowPastAStorageThatIsNotResizable) {
  Tensor t = make({1, 2, 3, 4}, {4});
  Tensor view = t.slice(0, 1, 4);
  EXPECT_TRUE(view.storage().set_resizable(false));  // as Tensor.numpy() of the view does
  void* const data = t.data_ptr();
  EXPECT_EQ(test::error_of([&] { t.resize_({5}); }),
            "Trying to resize storage that is not resizable");
  EXPECT_EQ(test::error_of([&] { t.resize_({1000000}); }),
            "Trying to resize storage that is not resizable");
  EXPECT_EQ(sizes(t), (Ints{4}));
  EXPECT_EQ(t.data_ptr(), data);
  // Shrinking, and growing back within the storage's bytes, keep the storage, as in PyTorch.
  t.resize_({2});
  t.resize_({2, 2});
  EXPECT_EQ(t.data_ptr(), data);
  EXPECT_TRUE(tensors_equal(t, make({1, 2, 3, 4}, {2, 2})));
  // The same rule for an out= tensor that is resized (an empty one).
  Tensor out = empty({0}, opts());
  out.storage().set_resizable(false);
  EXPECT_EQ(test::error_of([&] { add_out(out, t, t); }),
            "Trying to resize storage that is not resizable");
  EXPECT_EQ(sizes(out), (Ints{0}));
  Tensor fresh = empty({0}, opts());
  add_out(fresh, t, t);
  EXPECT_EQ(sizes(fresh), (Ints{2, 2}));
}

INSTANTIATE_TEST_SUITE_P(Devices, FactoryOps, ::testing::ValuesIn(test::op_test_devices()),
                         [](const auto& info) {
                           return std::string(device_type_name(info.param.type));
                         });

// ---- Meta: the same metadata, no memory ---------------------------------------------------------

class FactoryOpsMeta : public ::testing::Test {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  TensorOptions meta(ScalarType dtype = kFloat) const {
    return TensorOptions().dtype(dtype).device(kMeta);
  }
};

TEST_F(FactoryOpsMeta, FactoriesMakeMetaTensorsWithTheSameMetadata) {
  Tensor e = empty({2, 3}, meta());
  EXPECT_TRUE(e.is_meta());
  EXPECT_EQ(sizes(e), (Ints{2, 3}));
  EXPECT_EQ(e.data_ptr(), nullptr);
  EXPECT_EQ(strides(empty_strided({2, 3}, {1, 2}, meta())), (Ints{1, 2}));
  EXPECT_EQ(full({2}, 7, TensorOptions().device(kMeta)).scalar_type(), kLong);
  EXPECT_EQ(sizes(arange(0, 1, 0.25, TensorOptions().device(kMeta))), (Ints{4}));
  EXPECT_EQ(arange(0, 1, 0.25, TensorOptions().device(kMeta)).scalar_type(), kFloat);
  EXPECT_EQ(sizes(rand({3, 4}, meta())), (Ints{3, 4}));
  EXPECT_EQ(randn({5}, meta(kDouble)).scalar_type(), kDouble);
  Tensor like = zeros_like(empty({4, 2}, meta(kInt)));
  EXPECT_TRUE(like.is_meta());
  EXPECT_EQ(like.scalar_type(), kInt);
  EXPECT_EQ(test::error_of([&] {
              empty({-1, 2}, meta());
            }),
            "Trying to create tensor with negative dimension -1: [-1, 2]");
  EXPECT_EQ(test::error_of([&] { arange(0, 10, 0, meta()); }), "step must be nonzero");
}

TEST_F(FactoryOpsMeta, NewMetaTensorsStartAtVersionZero) {
  expect_new_tensors_at_version_zero(meta(), ones({2, 3}, meta()));
}

TEST_F(FactoryOpsMeta, ResizeRefusesToGrowPastAStorageThatIsNotResizable) {
  Tensor t = empty({4}, meta());
  t.resize_({8});
  EXPECT_EQ(sizes(t), (Ints{8}));
  t.storage().set_resizable(false);
  EXPECT_EQ(test::error_of([&] { t.resize_({9}); }),
            "Trying to resize storage that is not resizable");
  EXPECT_EQ(sizes(t), (Ints{8}));
  t.resize_({2, 4});
  EXPECT_EQ(sizes(t), (Ints{2, 4}));
}

}  // namespace
}  // namespace opd
