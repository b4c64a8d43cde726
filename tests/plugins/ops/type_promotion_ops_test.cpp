// Type promotion through real operators (torch.result_type): dimensioned tensors, zero-dim
// tensors and wrapped numbers (the Scalar overloads) over bool, uint8, int32, int64, float32 and
// float64; and the in-place rule (the result type must cast to self's dtype). The tables were
// taken from PyTorch 1.13 (`(a + b).dtype` and whether `a.add_(b)` raises).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "op_test_util.h"
#include "opd/ops.h"

namespace opd {
namespace {

using test::tensors_equal;
using test::values;

enum Kind { D, Z };  // dimensioned ([2]) or zero-dim tensor

constexpr ScalarType kDtypes[] = {kBool, kByte, kInt, kLong, kFloat, kDouble};

// One first operand against every second operand: the six dtypes as dimensioned tensors, the
// six as zero-dim tensors, then the wrapped numbers true, 2 and 2.5.
struct PromotionRow {
  ScalarType a;
  Kind kind;
  ScalarType expected[15];
};

// clang-format off
const PromotionRow kAddResultTypes[] = {
    {kBool,   D, {kBool,   kByte,   kInt,    kLong,   kFloat,  kDouble, kBool,   kByte,   kInt,    kLong,   kFloat,  kDouble, kBool,   kLong,   kFloat}},
    {kByte,   D, {kByte,   kByte,   kInt,    kLong,   kFloat,  kDouble, kByte,   kByte,   kByte,   kByte,   kFloat,  kDouble, kByte,   kByte,   kFloat}},
    {kInt,    D, {kInt,    kInt,    kInt,    kLong,   kFloat,  kDouble, kInt,    kInt,    kInt,    kInt,    kFloat,  kDouble, kInt,    kInt,    kFloat}},
    {kLong,   D, {kLong,   kLong,   kLong,   kLong,   kFloat,  kDouble, kLong,   kLong,   kLong,   kLong,   kFloat,  kDouble, kLong,   kLong,   kFloat}},
    {kFloat,  D, {kFloat,  kFloat,  kFloat,  kFloat,  kFloat,  kDouble, kFloat,  kFloat,  kFloat,  kFloat,  kFloat,  kFloat,  kFloat,  kFloat,  kFloat}},
    {kDouble, D, {kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble}},
    {kBool,   Z, {kBool,   kByte,   kInt,    kLong,   kFloat,  kDouble, kBool,   kByte,   kInt,    kLong,   kFloat,  kDouble, kBool,   kLong,   kFloat}},
    {kByte,   Z, {kByte,   kByte,   kInt,    kLong,   kFloat,  kDouble, kByte,   kByte,   kInt,    kLong,   kFloat,  kDouble, kByte,   kByte,   kFloat}},
    {kInt,    Z, {kInt,    kByte,   kInt,    kLong,   kFloat,  kDouble, kInt,    kInt,    kInt,    kLong,   kFloat,  kDouble, kInt,    kInt,    kFloat}},
    {kLong,   Z, {kLong,   kByte,   kInt,    kLong,   kFloat,  kDouble, kLong,   kLong,   kLong,   kLong,   kFloat,  kDouble, kLong,   kLong,   kFloat}},
    {kFloat,  Z, {kFloat,  kFloat,  kFloat,  kFloat,  kFloat,  kDouble, kFloat,  kFloat,  kFloat,  kFloat,  kFloat,  kDouble, kFloat,  kFloat,  kFloat}},
    {kDouble, Z, {kDouble, kDouble, kDouble, kDouble, kFloat,  kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble, kDouble}},
};
// clang-format on

// Each operand holds one value: true for Bool, 2 for integers, 2.5 for floating types; so a
// sum is exact in every result type and tells a truncated operand apart.
double value_of(ScalarType dtype) {
  return dtype == kBool ? 1.0 : is_floating_point(dtype) ? 2.5 : 2.0;
}

double expected_sum(double a, double b, ScalarType result) {
  return result == kBool ? (a + b != 0) : a + b;
}

class TypePromotionOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  Tensor operand(ScalarType dtype, Kind kind) const {
    const double v = value_of(dtype);
    return kind == D ? test::tensor({v, v}, {2}, dtype, GetParam())
                     : test::tensor({v}, {}, dtype, GetParam());
  }
};

std::string describe(ScalarType a, Kind ka, const std::string& b) {
  return std::string(to_string(a)) + (ka == D ? "[2]" : "[]") + " + " + b;
}

TEST_P(TypePromotionOps, AddFollowsResultTypeForEveryPair) {
  const Scalar numbers[] = {true, 2, 2.5};
  for (const PromotionRow& row : kAddResultTypes) {
    const Tensor a = operand(row.a, row.kind);
    int column = 0;
    for (Kind kb : {D, Z}) {
      for (ScalarType b_dtype : kDtypes) {
        const ScalarType expected = row.expected[column++];
        const std::string what =
            describe(row.a, row.kind, std::string(to_string(b_dtype)) + (kb == D ? "[2]" : "[]"));
        Tensor r = add(a, operand(b_dtype, kb));
        ASSERT_EQ(r.scalar_type(), expected) << what;
        EXPECT_EQ(r.dim(), (row.kind == D || kb == D) ? 1 : 0) << what;
        EXPECT_EQ(values(r)[0], expected_sum(value_of(row.a), value_of(b_dtype), expected)) << what;
      }
    }
    for (const Scalar& number : numbers) {
      const ScalarType expected = row.expected[column++];
      const std::string what = describe(row.a, row.kind, number.str());
      Tensor r = add(a, number);
      ASSERT_EQ(r.scalar_type(), expected) << what;
      EXPECT_EQ(r.dim(), row.kind == D ? 1 : 0) << what;
      EXPECT_EQ(values(r)[0], expected_sum(value_of(row.a), number.to_double(), expected)) << what;
      // A number on the left promotes the same way.
      EXPECT_EQ((number + a).scalar_type(), expected) << what;
    }
  }
}

// The cases the task names, spelled out.
TEST_P(TypePromotionOps, NamedCases) {
  const Device d = GetParam();
  Tensor i32 = test::tensor({1, 2, 3}, kInt, d);
  EXPECT_TRUE(tensors_equal(i32 + 2.5, test::tensor({3.5, 4.5, 5.5}, kFloat, d)));
  // A zero-dim tensor of a higher category wins with its own dtype: Double, not Float.
  EXPECT_TRUE(tensors_equal(i32 + test::tensor({0.5}, {}, kDouble, d),
                            test::tensor({1.5, 2.5, 3.5}, kDouble, d)));
  // ... of the same category it does not.
  EXPECT_EQ((i32 + test::tensor({1}, {}, kLong, d)).scalar_type(), kInt);
  EXPECT_EQ((test::tensor({1}, {}, kLong, d) + i32).scalar_type(), kInt);
  EXPECT_EQ((test::tensor({1, 2}, kFloat, d) * test::tensor({2}, {}, kDouble, d)).scalar_type(),
            kFloat);
  EXPECT_EQ((test::tensor({1}, {}, kInt, d) + 5).scalar_type(), kInt);
  EXPECT_EQ((test::tensor({1}, {}, kInt, d) + 2.5).scalar_type(), kFloat);
  EXPECT_EQ((test::tensor({1}, {}, kDouble, d) + 2.5).scalar_type(), kDouble);
  EXPECT_TRUE(tensors_equal(test::tensor({1, 0}, kBool, d) + test::tensor({1, 1}, kBool, d),
                            test::tensor({1, 1}, kBool, d)));
  EXPECT_TRUE(tensors_equal(test::tensor({1, 0}, kBool, d) * test::tensor({1, 1}, kBool, d),
                            test::tensor({1, 0}, kBool, d)));
  EXPECT_EQ((test::tensor({1}, kBool, d) + 1).scalar_type(), kLong);
  EXPECT_EQ((test::tensor({1}, kByte, d) + test::tensor({-1}, {}, kLong, d)).scalar_type(), kByte);
  EXPECT_EQ((test::tensor({5, 7}, kByte, d) * 2.5).scalar_type(), kFloat);
  EXPECT_TRUE(
      tensors_equal(test::tensor({5, 7}, kByte, d) * 2.5, test::tensor({12.5, 17.5}, kFloat, d)));
}

TEST_P(TypePromotionOps, OtherOperatorsPromoteTheSameWay) {
  const Device d = GetParam();
  Tensor i32 = test::tensor({1, 2}, kInt, d);
  Tensor f64_0d = test::tensor({2}, {}, kDouble, d);
  EXPECT_EQ(sub(i32, f64_0d).scalar_type(), kDouble);
  EXPECT_EQ(mul(i32, test::tensor({2}, {}, kLong, d)).scalar_type(), kInt);
  EXPECT_EQ(maximum(i32, test::tensor({1, 2}, kLong, d)).scalar_type(), kLong);
  EXPECT_EQ(minimum(test::tensor({1, 0}, kBool, d), test::tensor({1, 2}, kByte, d)).scalar_type(),
            kByte);
  EXPECT_EQ(pow(i32, 2).scalar_type(), kInt);
  EXPECT_EQ(pow(i32, 2.0).scalar_type(), kFloat);
  EXPECT_EQ(where(test::tensor({1, 0}, kBool, d), i32, f64_0d).scalar_type(), kDouble);
  EXPECT_EQ(
      where(test::tensor({1, 0}, kBool, d), i32, test::tensor({3, 4}, kByte, d)).scalar_type(),
      kInt);
  // Division is true division: integral results become Float, not Double.
  EXPECT_EQ(div(i32, test::tensor({2}, {}, kLong, d)).scalar_type(), kFloat);
  EXPECT_EQ(div(i32, f64_0d).scalar_type(), kDouble);
  EXPECT_EQ(div(test::tensor({1}, kBool, d), 2).scalar_type(), kFloat);
  // Comparisons compute in the promoted type and return Bool.
  EXPECT_TRUE(
      tensors_equal(eq(i32, test::tensor({1.5}, {}, kDouble, d)), test::tensor({0, 0}, kBool, d)));
}

// ---- in place: the result type must cast to self's dtype ----------------------------------------

// For self of each dtype: whether self.add_(other) is allowed for other of each dtype
// (dimensioned), then for the numbers true, 2 and 2.5.
struct InPlaceRow {
  ScalarType self;
  const char* allowed;  // '1' allowed, '0' refused, in kDtypes order then the three numbers
};

const InPlaceRow kInPlaceAdd[] = {
    {kBool, "100000100"}, {kByte, "111100110"},  {kInt, "111100110"},
    {kLong, "111100110"}, {kFloat, "111111111"}, {kDouble, "111111111"},
};

TEST_P(TypePromotionOps, InPlaceResultMustCastToSelf) {
  const Scalar numbers[] = {true, 2, 2.5};
  for (const InPlaceRow& row : kInPlaceAdd) {
    const std::string self_name = to_string(row.self);
    for (int k = 0; k < 9; ++k) {
      Tensor self = operand(row.self, D);
      const bool allowed = row.allowed[k] == '1';
      const bool is_number = k >= 6;
      const std::string what =
          self_name + ".add_(" + (is_number ? numbers[k - 6].str() : to_string(kDtypes[k])) + ")";
      const ScalarType other_type = is_number ? numbers[k - 6].type() : kDtypes[k];
      const auto call = [&] {
        if (is_number) {
          self.add_(numbers[k - 6]);
        } else {
          self.add_(operand(kDtypes[k], D));
        }
      };
      if (allowed) {
        call();
        EXPECT_EQ(self.scalar_type(), row.self) << what;
        continue;
      }
      // The refused result type: Long for an int number into Bool, Float for a float number,
      // otherwise the other tensor's dtype (which is always the higher one here).
      const ScalarType result =
          is_number ? (other_type == kDouble ? kFloat : other_type) : other_type;
      EXPECT_EQ(test::error_of(call), std::string("result type ") + to_string(result) +
                                          " can't be cast to the desired output type " + self_name)
          << what;
      EXPECT_EQ(values(self), values(operand(row.self, D))) << what << " changed self";
    }
  }
}

TEST_P(TypePromotionOps, InPlaceComputesInTheResultTypeThenCasts) {
  const Device d = GetParam();
  // uint8 += int64: computed in Long, then wrapped into uint8 (1 + 300 = 301 -> 45).
  Tensor bytes = test::tensor({1, 2}, kByte, d);
  bytes.add_(test::tensor({300, -1}, kLong, d));
  EXPECT_TRUE(tensors_equal(bytes, test::tensor({45, 1}, kByte, d)));
  // float32 += float64: stays Float.
  Tensor f = test::tensor({1.5, 2}, kFloat, d);
  f.add_(test::tensor({0.25, 2}, kDouble, d));
  EXPECT_TRUE(tensors_equal(f, test::tensor({1.75, 4}, kFloat, d)));
  // int32 *= int64 zero-dim: stays Int.
  Tensor i = test::tensor({3, 4}, kInt, d);
  i.mul_(test::tensor({2}, {}, kLong, d));
  EXPECT_TRUE(tensors_equal(i, test::tensor({6, 8}, kInt, d)));
  Tensor b = test::tensor({1, 0}, kBool, d);
  b.add_(test::tensor({1, 1}, kBool, d));
  EXPECT_TRUE(tensors_equal(b, test::tensor({1, 1}, kBool, d)));
}

INSTANTIATE_TEST_SUITE_P(Devices, TypePromotionOps, ::testing::ValuesIn(test::op_test_devices()),
                         [](const auto& info) {
                           return std::string(device_type_name(info.param.type));
                         });

}  // namespace
}  // namespace opd
