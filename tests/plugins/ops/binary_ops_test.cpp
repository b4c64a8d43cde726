// Binary operators: add, sub, mul, div (Tensor, Scalar, in-place and out= forms), pow, maximum,
// minimum, the comparisons, where; broadcasting, mixed devices and non-contiguous inputs.
// Expectations are PyTorch 1.13's. Type promotion has its own table (type_promotion_ops_test.cpp).

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "opd/ops.h"

namespace opd {
namespace {

using test::sizes;
using test::tensors_equal;
using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class BinaryOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  Device dev() const { return GetParam(); }
  Tensor make(const Doubles& v, const Ints& shape, ScalarType dtype = kFloat) const {
    return test::tensor(v, shape, dtype, dev());
  }
  Tensor vec(const Doubles& v, ScalarType dtype = kFloat) const {
    return test::tensor(v, dtype, dev());
  }
  Tensor scalar(double v, ScalarType dtype = kFloat) const { return make({v}, {}, dtype); }
};

// ---- add / sub / mul / div ----------------------------------------------------------------------

TEST_P(BinaryOps, AddSubMulDivOfTensors) {
  Tensor a = vec({1, 2, 3}), b = vec({4, -5, 0.5});
  EXPECT_TRUE(tensors_equal(add(a, b), vec({5, -3, 3.5})));
  EXPECT_TRUE(tensors_equal(sub(a, b), vec({-3, 7, 2.5})));
  EXPECT_TRUE(tensors_equal(mul(a, b), vec({4, -10, 1.5})));
  EXPECT_TRUE(tensors_equal(div(a, b), vec({0.25, -0.4, 6})));
  // Methods and operators are the same operators.
  EXPECT_TRUE(tensors_equal(a.add(b), vec({5, -3, 3.5})));
  EXPECT_TRUE(tensors_equal(a + b, vec({5, -3, 3.5})));
  EXPECT_TRUE(tensors_equal(a - b, vec({-3, 7, 2.5})));
  EXPECT_TRUE(tensors_equal(a * b, vec({4, -10, 1.5})));
  EXPECT_TRUE(tensors_equal(a / b, vec({0.25, -0.4, 6})));
  EXPECT_TRUE(tensors_equal(-a, vec({-1, -2, -3})));
}

TEST_P(BinaryOps, AlphaScalesOther) {
  EXPECT_TRUE(tensors_equal(add(vec({1, 2, 3}, kLong), vec({10, 20, 30}, kLong), 2),
                            vec({21, 42, 63}, kLong)));
  EXPECT_TRUE(tensors_equal(sub(vec({1, 2}), vec({1, 1}), 0.5), vec({0.5, 1.5})));
  EXPECT_TRUE(tensors_equal(vec({1, 2}).add(vec({1, 1}), -3), vec({-2, -1})));
  EXPECT_TRUE(tensors_equal(add(vec({1, 2}), 2, 3), vec({7, 8})));
  EXPECT_TRUE(tensors_equal(sub(vec({1, 2}, kLong), 3, 2), vec({-5, -4}, kLong)));
}

TEST_P(BinaryOps, AlphaErrors) {
  EXPECT_EQ(test::error_of([&] { add(vec({1}, kLong), vec({1}, kLong), 1.5); }),
            "For integral input tensors, argument alpha must not be a floating point number.");
  EXPECT_EQ(test::error_of([&] { add(vec({1}), vec({1}), true); }),
            "Boolean alpha only supported for Boolean results.");
}

TEST_P(BinaryOps, ScalarOperands) {
  Tensor a = vec({1, 2, 3});
  EXPECT_TRUE(tensors_equal(add(a, 1.5), vec({2.5, 3.5, 4.5})));
  EXPECT_TRUE(tensors_equal(a - 1, vec({0, 1, 2})));
  EXPECT_TRUE(tensors_equal(a * 2, vec({2, 4, 6})));
  EXPECT_TRUE(tensors_equal(a / 4, vec({0.25, 0.5, 0.75})));
  EXPECT_TRUE(tensors_equal(2 * vec({1, 2}, kLong), vec({2, 4}, kLong)));
  EXPECT_TRUE(tensors_equal(10 + a, vec({11, 12, 13})));
  EXPECT_TRUE(tensors_equal(1 - a, vec({0, -1, -2})));
  // uint8 wraps.
  EXPECT_TRUE(tensors_equal(vec({1, 2}, kByte) - 3, vec({254, 255}, kByte)));
  EXPECT_TRUE(tensors_equal(vec({1, 2}, kByte) + vec({200, 100}, kByte), vec({201, 102}, kByte)));
  // bool * int is Long.
  EXPECT_TRUE(tensors_equal(vec({1, 0}, kBool) * 3, vec({3, 0}, kLong)));
}

TEST_P(BinaryOps, IntegerDivisionIsTrueDivisionInFloat) {
  Tensor q = div(vec({1, 2, -3}, kLong), vec({2, 0, 2}, kLong));
  EXPECT_TRUE(tensors_equal(q, vec({0.5, kInf, -1.5}, kFloat)));
  EXPECT_TRUE(tensors_equal(div(vec({0}, kInt), vec({0}, kInt)), vec({kNaN})));
  EXPECT_TRUE(tensors_equal(vec({5, 7}, kLong) / 2, vec({2.5, 3.5})));
  EXPECT_TRUE(tensors_equal(vec({1, 2}) / vec({1, 0}, kBool), vec({1, kInf})));
}

TEST_P(BinaryOps, SubtractionOfBoolsIsRefused) {
  EXPECT_EQ(test::error_of([&] { sub(vec({1}, kBool), vec({1}, kBool)); }),
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead.");
  EXPECT_EQ(test::error_of([&] { sub(vec({1}, kBool), vec({1}, kLong)); }),
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.");
}

// ---- pow / maximum / minimum --------------------------------------------------------------------

TEST_P(BinaryOps, PowTensorScalar) {
  EXPECT_TRUE(tensors_equal(pow(vec({2, 3}), 2), vec({4, 9})));
  EXPECT_TRUE(tensors_equal(vec({4, 9}, kInt).pow(2), vec({16, 81}, kInt)));
  EXPECT_TRUE(tensors_equal(pow(vec({2, 3}, kInt), 0.5), vec({std::sqrt(2.0), std::sqrt(3.0)})));
  EXPECT_TRUE(tensors_equal(pow(vec({4, 0.25}), -0.5), vec({0.5, 2})));
  EXPECT_TRUE(tensors_equal(pow(vec({2, -8}), 1.0 / 3), vec({std::cbrt(2.0), kNaN})));
  EXPECT_EQ(test::error_of([&] { pow(vec({2}, kLong), -1); }),
            "Integers to negative integer powers are not allowed.");
}

TEST_P(BinaryOps, PowTensorTensor) {
  EXPECT_TRUE(tensors_equal(pow(vec({4, 9}), vec({0.5, 2}, kDouble)), vec({2, 81}, kDouble)));
  // A zero-dim exponent of a higher category decides the dtype, with its own precision.
  EXPECT_TRUE(tensors_equal(pow(vec({2, 3}, kLong), scalar(2, kDouble)), vec({4, 9}, kDouble)));
  EXPECT_TRUE(tensors_equal(pow(vec({2, 3}, kLong), scalar(2)), vec({4, 9}, kFloat)));
  // Integer bases to negative integer exponents: 1 stays 1, -1 alternates, the rest are 0.
  EXPECT_TRUE(tensors_equal(pow(vec({2, 1, -1, 3}, kLong), vec({-1, -2, -3, 0}, kLong)),
                            vec({0, 1, -1, 1}, kLong)));
  EXPECT_TRUE(
      tensors_equal(vec({2, 3}).pow(make({1, 2, 3, 0}, {2, 2})), make({2, 9, 8, 1}, {2, 2})));
}

TEST_P(BinaryOps, MaximumMinimumPromoteAndPropagateNaN) {
  EXPECT_TRUE(tensors_equal(maximum(vec({1, kNaN, -1}), vec({2, 0, kNaN})), vec({2, kNaN, kNaN})));
  EXPECT_TRUE(tensors_equal(minimum(vec({1, kNaN, -1}), vec({2, 0, kNaN})), vec({1, kNaN, kNaN})));
  EXPECT_TRUE(tensors_equal(maximum(vec({1, 5}, kInt), vec({2.5, 3})), vec({2.5, 5})));
  EXPECT_TRUE(tensors_equal(minimum(make({1, 4}, {2, 1}), vec({2, 3, 5})),
                            make({1, 1, 1, 2, 3, 4}, {2, 3})));
  EXPECT_TRUE(tensors_equal(vec({3, -2}, kLong).maximum(vec({1, 7}, kLong)), vec({3, 7}, kLong)));
}

// ---- comparisons and where ----------------------------------------------------------------------

TEST_P(BinaryOps, ComparisonsOfTensorsGiveBool) {
  Tensor a = vec({1, 2, 3}), b = vec({3, 2, 1});
  EXPECT_TRUE(tensors_equal(eq(a, b), vec({0, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(ne(a, b), vec({1, 0, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(lt(a, b), vec({1, 0, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(le(a, b), vec({1, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(gt(a, b), vec({0, 0, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(ge(a, b), vec({0, 1, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(a == b, vec({0, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(a != b, vec({1, 0, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(a < b, vec({1, 0, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(a <= b, vec({1, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(a > b, vec({0, 0, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(a >= b, vec({0, 1, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(ge(make({1, 3}, {2, 1}, kLong), vec({1, 2, 3}, kLong)),
                            make({1, 0, 0, 1, 1, 1}, {2, 3}, kBool)));
  // NaN compares unequal to everything.
  EXPECT_TRUE(tensors_equal(eq(vec({kNaN}), vec({kNaN})), vec({0}, kBool)));
  EXPECT_TRUE(tensors_equal(ne(vec({kNaN}), vec({kNaN})), vec({1}, kBool)));
}

TEST_P(BinaryOps, ComparisonsWithScalarsCompareInThePromotedType) {
  Tensor a = vec({1, 2, 3});
  EXPECT_TRUE(tensors_equal(eq(a, 2), vec({0, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(a.ne(2), vec({1, 0, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(lt(a, 2), vec({1, 0, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(le(a, 2), vec({1, 1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(a > 2, vec({0, 0, 1}, kBool)));
  EXPECT_TRUE(tensors_equal(a >= 2, vec({0, 1, 1}, kBool)));
  // 2 == 2.5 is false: the int tensor is compared in Float, not 2.5 truncated to 2.
  EXPECT_TRUE(tensors_equal(vec({2, 3}, kInt) == 2.5, vec({0, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(vec({2, 3}, kLong) < 2.5, vec({1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(eq(vec({1, 2}, kInt), vec({1, 2.5})), vec({1, 0}, kBool)));
  EXPECT_TRUE(tensors_equal(eq(vec({1, 0}, kBool), true), vec({1, 0}, kBool)));
}

TEST_P(BinaryOps, WhereSelectsBroadcastsAndPromotes) {
  Tensor cond = vec({1, 0, 1}, kBool);
  EXPECT_TRUE(tensors_equal(where(cond, vec({1, 2, 3}), vec({-1, -2, -3})), vec({1, -2, 3})));
  EXPECT_TRUE(tensors_equal(where(make({1, 0}, {2, 1}, kBool), vec({1, 2, 3}), scalar(0)),
                            make({1, 2, 3, 0, 0, 0}, {2, 3})));
  EXPECT_TRUE(
      tensors_equal(where(vec({1, 0}, kBool), vec({1, 2}, kLong), vec({0.5, 1.5})), vec({1, 1.5})));
  Tensor wide = where(vec({1, 0}, kBool), vec({1, 2}, kInt), scalar(0.5, kDouble));
  EXPECT_TRUE(tensors_equal(wide, vec({1, 0.5}, kDouble)));
  EXPECT_EQ(test::error_of([&] {
              where(vec({1, 0}), vec({1, 2}), vec({3, 4}));
            }),
            "where expected condition to be a boolean tensor, but got a tensor with dtype Float");
}

// ---- broadcasting -------------------------------------------------------------------------------

TEST_P(BinaryOps, BroadcastingShapes) {
  Tensor m = make({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(tensors_equal(m + vec({10, 20, 30}), make({11, 22, 33, 14, 25, 36}, {2, 3})));
  EXPECT_TRUE(tensors_equal(m * make({1, -1}, {2, 1}), make({1, 2, 3, -4, -5, -6}, {2, 3})));
  EXPECT_TRUE(tensors_equal(make({1, 2}, {2, 1}) + make({10, 20, 30}, {1, 3}),
                            make({11, 21, 31, 12, 22, 32}, {2, 3})));
  EXPECT_TRUE(tensors_equal(m - scalar(1), make({0, 1, 2, 3, 4, 5}, {2, 3})));
  EXPECT_TRUE(tensors_equal(scalar(2) * scalar(3), scalar(6)));
  EXPECT_EQ(sizes(make({5}, {1, 1, 1}) + vec({1, 2})), (Ints{1, 1, 2}));
  // Size-0 dimensions: 1 broadcasts to 0.
  Tensor none = empty({2, 0}, TensorOptions().device(dev()));
  EXPECT_EQ(sizes(none + vec({1})), (Ints{2, 0}));
  EXPECT_EQ(sizes(vec({1}) + empty({0}, TensorOptions().device(dev()))), (Ints{0}));
}

TEST_P(BinaryOps, BroadcastingErrorNamesTheDimension) {
  Tensor a = empty({2, 3}, TensorOptions().device(dev()));
  EXPECT_EQ(test::error_of([&] {
              add(a, empty({2, 4}, TensorOptions().device(dev())));
            }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 1");
  EXPECT_EQ(test::error_of([&] {
              mul(a, empty({3, 1, 2}, TensorOptions().device(dev())));
            }),
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
            "dimension 2");
  EXPECT_EQ(test::error_of([&] { lt(a, empty({4}, TensorOptions().device(dev()))); }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 1");
}

// ---- non-contiguous inputs ----------------------------------------------------------------------

TEST_P(BinaryOps, NonContiguousInputs) {
  Tensor m = make({0, 1, 2, 3, 4, 5}, {2, 3});
  // Transposed.
  EXPECT_TRUE(tensors_equal(m.t() + make({10, 10, 10, 10, 10, 10}, {3, 2}),
                            make({10, 13, 11, 14, 12, 15}, {3, 2})));
  EXPECT_TRUE(tensors_equal(m.t() * m.t(), make({0, 9, 1, 16, 4, 25}, {3, 2})));
  // Strided slice (columns 0 and 2).
  EXPECT_TRUE(tensors_equal(m.slice(1, 0, 3, 2) + 1, make({1, 3, 4, 6}, {2, 2})));
  // Expanded (stride 0).
  EXPECT_TRUE(tensors_equal(vec({1, 2, 3}).view({3, 1}).expand({3, 4}) + vec({10, 20, 30, 40}),
                            make({11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}, {3, 4})));
  // At a storage offset.
  EXPECT_TRUE(tensors_equal(m.select(0, 1) + vec({1, 1, 1}), vec({4, 5, 6})));
  EXPECT_TRUE(tensors_equal(m.slice(1, 1, 3) - m.slice(1, 0, 2), make({1, 1, 1, 1}, {2, 2})));
  EXPECT_TRUE(tensors_equal(div(m.select(1, 2), m.select(1, 1)), vec({2, 1.25})));
  EXPECT_TRUE(tensors_equal(gt(m.t(), 2), make({0, 1, 0, 1, 0, 1}, {3, 2}, kBool)));
  EXPECT_TRUE(
      tensors_equal(where(gt(m.t(), 2), m.t(), scalar(-1)), make({-1, 3, -1, 4, -1, 5}, {3, 2})));
}

INSTANTIATE_TEST_SUITE_P(Devices, BinaryOps, ::testing::ValuesIn(test::op_test_devices()),
                         [](const auto& info) {
                           return std::string(device_type_name(info.param.type));
                         });

// ---- devices ------------------------------------------------------------------------------------

class BinaryOpsDevices : public ::testing::Test {
 protected:
  void SetUp() override { test::load_default_plugins(); }
};

TEST_F(BinaryOpsDevices, MixedDevicesAreRefusedInPyTorchsWords) {
  Tensor cpu = ones({3});
  Tensor meta = empty({3}, TensorOptions().device(kMeta));
  const std::string expected =
      "Expected all tensors to be on the same device, but found at least two devices, meta and "
      "cpu!";
  EXPECT_EQ(test::error_of([&] { add(cpu, meta); }), expected);
  EXPECT_EQ(test::error_of([&] { add(meta, cpu); }), expected);
  EXPECT_EQ(test::error_of([&] { mul(meta, cpu); }), expected);
  EXPECT_EQ(test::error_of([&] { lt(cpu, meta); }), expected);
}

TEST_F(BinaryOpsDevices, AZeroDimCpuTensorJoinsAnotherDevice) {
  Tensor meta = empty({2, 3}, TensorOptions().device(kMeta).dtype(kInt));
  Tensor r = add(meta, scalar_tensor(1.5, kDouble));
  EXPECT_TRUE(r.is_meta());
  EXPECT_EQ(sizes(r), (Ints{2, 3}));
  EXPECT_EQ(r.scalar_type(), kDouble);
  Tensor s = meta * 2.5;
  EXPECT_TRUE(s.is_meta());
  EXPECT_EQ(s.scalar_type(), kFloat);
}

TEST_F(BinaryOpsDevices, MetaComputesShapesDtypesAndErrors) {
  auto meta = [](Ints shape, ScalarType dtype = kFloat) {
    return empty(shape, TensorOptions().device(kMeta).dtype(dtype));
  };
  Tensor q = div(meta({2, 1}, kLong), meta({3}, kLong));
  EXPECT_TRUE(q.is_meta());
  EXPECT_EQ(sizes(q), (Ints{2, 3}));
  EXPECT_EQ(q.scalar_type(), kFloat);
  EXPECT_EQ(eq(meta({4}), meta({4}, kDouble)).scalar_type(), kBool);
  EXPECT_EQ(where(meta({2}, kBool), meta({2}, kInt), meta({}, kDouble)).scalar_type(), kDouble);
  EXPECT_EQ(test::error_of([&] {
              add(meta({2, 3}), meta({2, 4}));
            }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 1");
  EXPECT_EQ(test::error_of([&] { sub(meta({1}, kBool), meta({1}, kBool)); }),
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead.");
}

}  // namespace
}  // namespace opd
