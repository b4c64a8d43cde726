// In-place and out= forms: they return their target, write through views, bump the version
// counter once, refuse to write into overlapping memory, keep the target's shape (in place) or
// resize only an empty out= tensor, and never cast a result to a dtype it cannot safely take.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "op_test_util.h"
#include "opd/ops.h"
#include "warning_capture.h"

namespace opd {
namespace {

using test::sizes;
using test::tensors_equal;
using test::values;
using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

const char* const kInternalOverlap =
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.";
const char* const kPartialOverlap =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location. Please clone() the tensor before performing the operation.";

class InPlaceOut : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  Tensor make(const Doubles& v, const Ints& shape, ScalarType dtype = kFloat) const {
    return test::tensor(v, shape, dtype, GetParam());
  }
  Tensor vec(const Doubles& v, ScalarType dtype = kFloat) const {
    return test::tensor(v, dtype, GetParam());
  }
  Tensor empty_of(const Ints& shape, ScalarType dtype = kFloat) const {
    return empty(shape, TensorOptions().device(GetParam()).dtype(dtype));
  }
};

// ---- in place -----------------------------------------------------------------------------------

TEST_P(InPlaceOut, InPlaceFormsReturnSelfAndBumpTheVersionOnce) {
  Tensor x = vec({1, 2, 3});
  const Tensor y = vec({1, 1, 1});
  uint32_t v = x.version();
  const auto check = [&](const Tensor& result, const Doubles& expected, const char* what) {
    EXPECT_TRUE(result.is_same(x)) << what;
    EXPECT_EQ(x.version(), ++v) << what;
    EXPECT_TRUE(tensors_equal(x, vec(expected))) << what;
  };
  check(x.add_(y), {2, 3, 4}, "add_(Tensor)");
  check(x.add_(y, 2), {4, 5, 6}, "add_(Tensor, alpha)");
  check(x.add_(1), {5, 6, 7}, "add_(Scalar)");
  check(x.sub_(y), {4, 5, 6}, "sub_(Tensor)");
  check(x.sub_(1, 2), {2, 3, 4}, "sub_(Scalar, alpha)");
  check(x.mul_(vec({2, 2, 0.5})), {4, 6, 2}, "mul_(Tensor)");
  check(x.mul_(2), {8, 12, 4}, "mul_(Scalar)");
  check(x.div_(vec({2, 3, 4})), {4, 4, 1}, "div_(Tensor)");
  check(x.div_(4), {1, 1, 0.25}, "div_(Scalar)");
  check(x += y, {2, 2, 1.25}, "+=");
  check(x -= 1, {1, 1, 0.25}, "-=");
  check(x *= y, {1, 1, 0.25}, "*=");
  check(x /= 0.5, {2, 2, 0.5}, "/=");
  check(x.fill_(3), {3, 3, 3}, "fill_");
  check(x.zero_(), {0, 0, 0}, "zero_");
  check(x.copy_(vec({-1, 0, 1})), {-1, 0, 1}, "copy_");
  check(x.relu_(), {0, 0, 1}, "relu_");
  // Copying a tensor onto itself still counts as a write.
  check(x.copy_(x), {0, 0, 1}, "copy_(self)");
}

TEST_P(InPlaceOut, InPlaceWritesThroughNonContiguousViews) {
  Tensor x = make({0, 1, 2, 3, 4, 5}, {2, 3});
  x.t().add_(make({10, 20, 30, 40, 50, 60}, {3, 2}));
  EXPECT_TRUE(tensors_equal(x, make({10, 31, 52, 23, 44, 65}, {2, 3})));
  x.slice(1, 0, 3, 2).mul_(0);
  EXPECT_TRUE(tensors_equal(x, make({0, 31, 0, 0, 44, 0}, {2, 3})));
  x.select(1, 1).sub_(vec({1, 4}));
  EXPECT_TRUE(tensors_equal(x, make({0, 30, 0, 0, 40, 0}, {2, 3})));
  // The other operand broadcasts to self's shape.
  x.add_(make({1, 2}, {2, 1}));
  EXPECT_TRUE(tensors_equal(x, make({1, 31, 1, 2, 42, 2}, {2, 3})));
  // Self as both operands.
  x.mul_(x);
  EXPECT_TRUE(tensors_equal(x, make({1, 961, 1, 4, 1764, 4}, {2, 3})));
}

TEST_P(InPlaceOut, InPlaceKeepsSelfsShape) {
  Tensor x = vec({1, 2, 3});
  const uint32_t version = x.version();
  EXPECT_EQ(test::error_of([&] {
              x.add_(make({1, 2, 3, 4, 5, 6}, {2, 3}));
            }),
            "output with shape [3] doesn't match the broadcast shape [2, 3]");
  EXPECT_EQ(test::error_of([&] {
              make({5}, {}).mul_(vec({1, 2}));
            }),
            "output with shape [] doesn't match the broadcast shape [2]");
  EXPECT_TRUE(tensors_equal(x, vec({1, 2, 3})));
  EXPECT_EQ(x.version(), version);
}

TEST_P(InPlaceOut, InPlaceResultMustCastToSelfsDtype) {
  Tensor i = vec({1, 2, 3}, kLong);
  const uint32_t version = i.version();
  EXPECT_EQ(test::error_of([&] { i.add_(1.5); }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(test::error_of([&] { i.div_(2); }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(test::error_of([&] {
              i.div_(vec({2, 2, 2}, kLong));
            }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(test::error_of([&] {
              vec({1, 2}, kInt).mul_(vec({1.5, 1}));
            }),
            "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(test::error_of([&] {
              vec({1, 0}, kBool).add_(1);
            }),
            "result type Long can't be cast to the desired output type Bool");
  EXPECT_TRUE(tensors_equal(i, vec({1, 2, 3}, kLong)));
  EXPECT_EQ(i.version(), version);
  // Allowed: a lower result type is cast into self.
  Tensor f = vec({1, 2});
  f.add_(vec({0.5, 0.5}, kDouble));
  EXPECT_TRUE(tensors_equal(f, vec({1.5, 2.5})));
  f.mul_(vec({2, 3}, kLong));
  EXPECT_TRUE(tensors_equal(f, vec({3, 7.5})));
}

TEST_P(InPlaceOut, WritingIntoOverlappingMemoryIsRefused) {
  Tensor base = vec({1});
  Tensor expanded = base.expand({3});
  EXPECT_EQ(test::error_of([&] { expanded.add_(1); }), kInternalOverlap);
  EXPECT_EQ(test::error_of([&] { expanded.mul_(vec({1, 2, 3})); }), kInternalOverlap);
  EXPECT_EQ(test::error_of([&] { expanded.relu_(); }), kInternalOverlap);
  EXPECT_EQ(test::error_of([&] { expanded.copy_(vec({1, 2, 3})); }), kInternalOverlap);
  EXPECT_EQ(test::error_of([&] {
              add_out(expanded, vec({1, 2, 3}), vec({1, 1, 1}));
            }),
            kInternalOverlap);
  EXPECT_EQ(test::error_of([&] { make({1, 2}, {2, 1}).expand({2, 3}).div_(2); }), kInternalOverlap);
  EXPECT_TRUE(tensors_equal(base, vec({1})));
  // An input that partly overlaps the output.
  Tensor x = vec({0, 1, 2, 3, 4});
  Tensor out = x.slice(0, 1, 4);
  EXPECT_EQ(test::error_of([&] {
              add_out(out, x.slice(0, 0, 3), vec({1, 1, 1}));
            }),
            kPartialOverlap);
  EXPECT_TRUE(tensors_equal(x, vec({0, 1, 2, 3, 4})));
}

// Versions count the writes made to a tensor's data by kernels; a factory's own fill or copy is
// not one (Note [Factory versions]; factory_ops_test checks each starts at 0). What autograd
// relies on holds: reading never bumps, and every in-place write bumps exactly once, on the
// tensor and on all its views.
TEST_P(InPlaceOut, ReadsNeverBumpAndEachInPlaceWriteBumpsOnce) {
  const TensorOptions options = TensorOptions().device(GetParam());
  Tensor x = vec({1, 2, 3});
  const std::pair<const char*, Tensor> made[] = {
      {"empty", empty({2}, options)},
      {"zeros", zeros({2}, options)},
      {"ones", ones({2}, options)},
      {"full", full({2}, 7, options)},
      {"zeros_like", zeros_like(x)},
      {"arange", arange(0, 3, 1, options)},
      {"clone", x.clone()},
      {"to", x.to(kDouble)},
      {"contiguous", make({1, 2, 3, 4}, {2, 2}).t().contiguous()},
      {"add", x + x},
  };
  for (const auto& [what, t] : made) {
    const uint32_t v = t.version();
    (void)t.clone();
    (void)opd::add(t, t);
    (void)t.sum();
    EXPECT_EQ(t.version(), v) << what << ": a read bumped the version";
    Tensor view = t.view({-1});
    t.add_(1);
    EXPECT_EQ(t.version(), v + 1) << what;
    EXPECT_EQ(view.version(), v + 1) << what << ": views share the counter";
  }
}

// ---- out= ---------------------------------------------------------------------------------------

TEST_P(InPlaceOut, OutFormsWriteIntoOutAndReturnIt) {
  Tensor a = vec({1, 2, 3}), b = vec({4, 5, 6});
  const uint32_t a_version = a.version();
  Tensor out = empty_of({3});
  const uint32_t out_version = out.version();
  void* const data = out.data_ptr();
  EXPECT_EQ(&add_out(out, a, b), &out);
  EXPECT_TRUE(tensors_equal(out, vec({5, 7, 9})));
  EXPECT_EQ(&add_outf(a, b, 2, out), &out);
  EXPECT_TRUE(tensors_equal(out, vec({9, 12, 15})));
  sub_out(out, a, b, 2);
  EXPECT_TRUE(tensors_equal(out, vec({-7, -8, -9})));
  sub_outf(a, b, 1, out);
  EXPECT_TRUE(tensors_equal(out, vec({-3, -3, -3})));
  mul_out(out, a, b);
  EXPECT_TRUE(tensors_equal(out, vec({4, 10, 18})));
  mul_outf(a, 2 * b, out);
  EXPECT_TRUE(tensors_equal(out, vec({8, 20, 36})));
  div_out(out, b, a);
  EXPECT_TRUE(tensors_equal(out, vec({4, 2.5, 2})));
  div_outf(a, b, out);
  EXPECT_TRUE(tensors_equal(out, vec({0.25, 0.4, 0.5})));
  // Same memory throughout, one version per call.
  EXPECT_EQ(out.data_ptr(), data);
  EXPECT_EQ(out.version(), out_version + 8);
  EXPECT_EQ(a.version(), a_version);
  // Out may be an input (the in-place case).
  add_out(a, a, b);
  EXPECT_TRUE(tensors_equal(a, vec({5, 7, 9})));
}

TEST_P(InPlaceOut, OutBroadcastsIntoANonContiguousOut) {
  Tensor out = zeros({3, 2}, TensorOptions().device(GetParam()));
  Tensor target = out.t();  // [2, 3], strides [1, 2]
  mul_out(target, make({1, 2}, {2, 1}), vec({1, 2, 3}));
  EXPECT_TRUE(tensors_equal(target, make({1, 2, 3, 2, 4, 6}, {2, 3})));
  EXPECT_TRUE(tensors_equal(out, make({1, 2, 2, 4, 3, 6}, {3, 2})));
}

TEST_P(InPlaceOut, AnEmptyOutIsResized) {
  Tensor out = empty_of({0});
  add_out(out, make({1, 2, 3, 4, 5, 6}, {2, 3}), vec({10, 20, 30}));
  EXPECT_EQ(sizes(out), (Ints{2, 3}));
  EXPECT_TRUE(tensors_equal(out, make({11, 22, 33, 14, 25, 36}, {2, 3})));
  Tensor q = empty_of({0}, kDouble);
  div_out(q, vec({1, 2}, kLong), vec({2}, kLong));
  EXPECT_TRUE(tensors_equal(q, vec({0.5, 1}, kDouble)));
}

TEST_P(InPlaceOut, AnOutWithElementsIsResizedWithPyTorchsWarning) {
  Tensor out = empty_of({4});
  test_util::WarningCapture warnings;
  add_out(out, make({1, 2, 3, 4, 5, 6}, {2, 3}), vec({1}));
  EXPECT_EQ(sizes(out), (Ints{2, 3}));
  EXPECT_EQ(values(out), (Doubles{2, 3, 4, 5, 6, 7}));
  mul_out(out, vec({1, 2}), vec({1, 2}));
  EXPECT_EQ(sizes(out), (Ints{2}));
  EXPECT_EQ(values(out), (Doubles{1, 4}));
  EXPECT_EQ(warnings.messages(),
            (std::vector<std::string>{test_util::resized_out_warning("[4]", "[2, 3]"),
                                      test_util::resized_out_warning("[2, 3]", "[2]")}));
}

TEST_P(InPlaceOut, OutDtypeMustTakeTheResultSafely) {
  Tensor a = vec({1, 2}), b = vec({3, 4});
  // A wider out is fine: computed in Float, stored as Double.
  Tensor wide = empty_of({2}, kDouble);
  add_out(wide, a, b);
  EXPECT_TRUE(tensors_equal(wide, vec({4, 6}, kDouble)));
  Tensor ints = empty_of({2}, kLong);
  add_out(ints, vec({1, 2}, kInt), vec({3, 4}, kInt));
  EXPECT_TRUE(tensors_equal(ints, vec({4, 6}, kLong)));
  Tensor narrow = empty_of({2}, kInt);
  EXPECT_EQ(test::error_of([&] { add_out(narrow, a, b); }),
            "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(test::error_of([&] {
              div_out(ints, vec({1, 2}, kLong), vec({2, 2}, kLong));
            }),
            "result type Float can't be cast to the desired output type Long");
  Tensor flags = empty_of({2}, kBool);
  EXPECT_EQ(test::error_of([&] {
              mul_out(flags, vec({1, 2}, kInt), vec({1, 2}, kInt));
            }),
            "result type Int can't be cast to the desired output type Bool");
}

INSTANTIATE_TEST_SUITE_P(Devices, InPlaceOut, ::testing::ValuesIn(test::op_test_devices()),
                         [](const auto& info) {
                           return std::string(device_type_name(info.param.type));
                         });

// ---- Meta: the same checks, no data -------------------------------------------------------------

class InPlaceOutMeta : public ::testing::Test {
 protected:
  void SetUp() override { test::load_default_plugins(); }
};

TEST_F(InPlaceOutMeta, ChecksAndVersionsMatchTheCpu) {
  auto meta = [](Ints shape, ScalarType dtype = kFloat) {
    return empty(shape, TensorOptions().device(kMeta).dtype(dtype));
  };
  Tensor x = meta({3});
  x.add_(meta({3}));
  EXPECT_EQ(x.version(), 1u);
  Tensor out = meta({0});
  add_out(out, meta({2, 3}), meta({3}));
  EXPECT_EQ(sizes(out), (Ints{2, 3}));
  EXPECT_EQ(test::error_of([&] {
              x.add_(meta({2, 3}));
            }),
            "output with shape [3] doesn't match the broadcast shape [2, 3]");
  EXPECT_EQ(test::error_of([&] { meta({2}, kLong).add_(1.5); }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(test::error_of([&] { meta({1}).expand({3}).add_(1); }), kInternalOverlap);
  test_util::WarningCapture warnings;
  add_out(out, meta({4}), meta({4}));
  EXPECT_EQ(sizes(out), (Ints{4}));
  EXPECT_EQ(warnings.messages(),
            (std::vector<std::string>{test_util::resized_out_warning("[2, 3]", "[4]")}));
}

}  // namespace
}  // namespace opd
