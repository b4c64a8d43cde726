#include "common/type_promotion.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "opd/scalar.h"
#include "opd/tensor.h"

namespace opd::common {
namespace {

// The three tiers of Note [Result type].
enum class Kind { Dim, ZeroDim, Wrapped };

// A CPU tensor of `dtype` over a static buffer: [2] for Dim, [] otherwise, marked as a wrapped
// number for Wrapped. Only its metadata is read.
Tensor operand(ScalarType dtype, Kind kind) {
  alignas(16) static std::array<char, 64> buffer{};
  const std::vector<int64_t> sizes =
      kind == Kind::Dim ? std::vector<int64_t>{2} : std::vector<int64_t>{};
  Tensor t = from_blob(buffer.data(), sizes, dtype);
  if (kind == Kind::Wrapped) t.unsafe_get_impl()->set_wrapped_number(true);
  return t;
}

const char* kind_name(Kind k) {
  return k == Kind::Dim ? "dim" : k == Kind::ZeroDim ? "0-dim" : "wrapped";
}

struct Case {
  ScalarType a;
  Kind ka;
  ScalarType b;
  Kind kb;
  ScalarType expected;
};

constexpr Kind D = Kind::Dim, Z = Kind::ZeroDim, W = Kind::Wrapped;

// torch.result_type over bool, uint8, int32, int64, float, double in each tier, with PyTorch's
// answers. Wrapped numbers are Bool, Int64 or Float64, as Python numbers become.
const Case kCases[] = {
    // Two dimensioned tensors: promote_types.
    {kBool, D, kBool, D, kBool},
    {kBool, D, kByte, D, kByte},
    {kByte, D, kInt, D, kInt},
    {kInt, D, kLong, D, kLong},
    {kLong, D, kFloat, D, kFloat},
    {kFloat, D, kDouble, D, kDouble},
    {kByte, D, kDouble, D, kDouble},
    {kBool, D, kFloat, D, kFloat},
    // A zero-dim tensor wins only with a higher category.
    {kInt, D, kLong, Z, kInt},
    {kByte, D, kLong, Z, kByte},
    {kFloat, D, kDouble, Z, kFloat},
    {kFloat, D, kLong, Z, kFloat},
    {kInt, D, kDouble, Z, kDouble},
    {kByte, D, kFloat, Z, kFloat},
    {kBool, D, kInt, Z, kInt},
    {kBool, D, kBool, Z, kBool},
    {kDouble, Z, kInt, D, kDouble},
    {kLong, Z, kByte, D, kByte},
    // Wrapped numbers: a floating one counts as the default dtype, Float.
    {kInt, D, kLong, W, kInt},
    {kByte, D, kLong, W, kByte},
    {kBool, D, kLong, W, kLong},
    {kBool, D, kBool, W, kBool},
    {kBool, D, kDouble, W, kFloat},
    {kLong, D, kDouble, W, kFloat},
    {kInt, D, kDouble, W, kFloat},
    {kFloat, D, kDouble, W, kFloat},
    {kDouble, D, kDouble, W, kDouble},
    {kDouble, D, kLong, W, kDouble},
    {kByte, D, kBool, W, kByte},
    // Zero-dim tensors against wrapped numbers.
    {kInt, Z, kLong, W, kInt},
    {kInt, Z, kDouble, W, kFloat},
    {kDouble, Z, kDouble, W, kDouble},
    {kFloat, Z, kDouble, W, kFloat},
    {kBool, Z, kLong, W, kLong},
    {kByte, Z, kBool, W, kByte},
    {kLong, Z, kDouble, W, kFloat},
    // Within one tier of zero-dim tensors or wrapped numbers: promote_types (wrapped floats as
    // Float first).
    {kInt, Z, kLong, Z, kLong},
    {kFloat, Z, kDouble, Z, kDouble},
    {kBool, Z, kByte, Z, kByte},
    {kLong, W, kDouble, W, kFloat},
    {kLong, W, kLong, W, kLong},
    {kBool, W, kBool, W, kBool},
    {kDouble, W, kDouble, W, kFloat},
    {kBool, W, kLong, W, kLong},
};

TEST(TypePromotion, ResultTypeTable) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(fmt::format("{} {} with {} {}", c.a, kind_name(c.ka), c.b, kind_name(c.kb)));
    const Tensor a = operand(c.a, c.ka), b = operand(c.b, c.kb);
    EXPECT_EQ(result_type(a, b), c.expected);
    // The order of operands never matters.
    EXPECT_EQ(result_type(b, a), c.expected);
    const std::vector<Tensor> both{a, b};
    EXPECT_EQ(result_type(both), c.expected);
  }
}

TEST(TypePromotion, AllThreeTiers) {
  // int32 tensor, int64 zero-dim, wrapped float: the floating wrapped number lifts the result
  // to Float.
  const std::vector<Tensor> ts{operand(kInt, D), operand(kLong, Z), operand(kDouble, W)};
  EXPECT_EQ(result_type(ts), kFloat);
  // A floating zero-dim tensor outranks a floating wrapped number.
  const std::vector<Tensor> us{operand(kByte, D), operand(kDouble, Z), operand(kDouble, W)};
  EXPECT_EQ(result_type(us), kDouble);
  // Nothing above the dimensioned tensors' category: they decide.
  const std::vector<Tensor> vs{operand(kFloat, D), operand(kDouble, Z), operand(kLong, W)};
  EXPECT_EQ(result_type(vs), kFloat);
}

TEST(TypePromotion, ComplexOperands) {
  // A floating dimensioned tensor keeps its precision in the complex result.
  EXPECT_EQ(result_type(operand(kDouble, D), operand(kComplexFloat, Z)), kComplexDouble);
  EXPECT_EQ(result_type(operand(kFloat, D), operand(kComplexDouble, Z)), kComplexFloat);
  EXPECT_EQ(result_type(operand(kInt, D), operand(kComplexDouble, Z)), kComplexDouble);
  // A wrapped complex number counts as ComplexFloat.
  EXPECT_EQ(result_type(operand(kLong, D), operand(kComplexDouble, W)), kComplexFloat);
  EXPECT_EQ(result_type(operand(kDouble, D), operand(kComplexDouble, W)), kComplexDouble);
  EXPECT_EQ(result_type(operand(kComplexFloat, D), operand(kDouble, Z)), kComplexFloat);
}

TEST(TypePromotion, ScalarsAreWrappedNumbers) {
  EXPECT_EQ(result_type(operand(kLong, D), Scalar(2.5)), kFloat);
  EXPECT_EQ(result_type(operand(kInt, D), Scalar(2)), kInt);
  EXPECT_EQ(result_type(operand(kBool, D), Scalar(2)), kLong);
  EXPECT_EQ(result_type(operand(kBool, D), Scalar(true)), kBool);
  EXPECT_EQ(result_type(operand(kDouble, Z), Scalar(1.5)), kDouble);
  // clamp's promotion: self, then both bounds.
  ResultTypeState state = update_result_type_state(operand(kInt, D), {});
  state = update_result_type_state(Scalar(0), state);
  EXPECT_EQ(result_type(state), kInt);
  state = update_result_type_state(Scalar(0.5), state);
  EXPECT_EQ(result_type(state), kFloat);
}

TEST(TypePromotion, UndefinedTensorsAreSkipped) {
  const std::vector<Tensor> ts{Tensor(), operand(kInt, D), Tensor()};
  EXPECT_EQ(result_type(ts), kInt);
  EXPECT_EQ(result_type(std::vector<Tensor>{}), ScalarType::Undefined);
  EXPECT_EQ(result_type(ResultTypeState{}), ScalarType::Undefined);
}

TEST(TypePromotion, CanCast) {
  EXPECT_TRUE(can_cast(kInt, kFloat));
  EXPECT_TRUE(can_cast(kDouble, kFloat));
  EXPECT_TRUE(can_cast(kBool, kBool));
  EXPECT_TRUE(can_cast(kBool, kLong));
  EXPECT_TRUE(can_cast(kLong, kByte));
  EXPECT_TRUE(can_cast(kFloat, kComplexFloat));
  EXPECT_FALSE(can_cast(kFloat, kLong));
  EXPECT_FALSE(can_cast(kDouble, kByte));
  EXPECT_FALSE(can_cast(kLong, kBool));
  EXPECT_FALSE(can_cast(kFloat, kBool));
  EXPECT_FALSE(can_cast(kComplexFloat, kDouble));
}

}  // namespace
}  // namespace opd::common
