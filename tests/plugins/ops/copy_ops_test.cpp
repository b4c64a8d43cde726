// Copies and conversions: _to_copy, to (dtype, device), copy_ (broadcasting, dtype conversion,
// non-contiguous destinations), clone, contiguous, fill_, zero_ and item, against PyTorch 1.13.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_text.h"
#include "op_test_util.h"
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

class CopyOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  Device dev() const { return GetParam(); }
  Tensor make(const Doubles& v, const Ints& shape, ScalarType dtype = kFloat) const {
    return test::tensor(v, shape, dtype, dev());
  }
};

// ---- to / _to_copy ------------------------------------------------------------------------------

TEST_P(CopyOps, ToTheSameDtypeReturnsSelf) {
  Tensor x = make({1, 2, 3}, {3});
  EXPECT_TRUE(x.to(kFloat).is_same(x));
  EXPECT_TRUE(x.to(x.device(), kFloat).is_same(x));
  // copy=true always copies.
  Tensor copied = x.to(kFloat, /*non_blocking=*/false, /*copy=*/true);
  EXPECT_FALSE(copied.is_same(x));
  EXPECT_FALSE(copied.storage().is_same(x.storage()));
  EXPECT_TRUE(tensors_equal(copied, x));
}

TEST_P(CopyOps, ToAnotherDtypeConvertsAsPyTorchDoes) {
  // Floating to integral truncates toward zero.
  EXPECT_TRUE(tensors_equal(make({1.7, -1.7, 2.5}, {3}).to(kInt), make({1, -1, 2}, {3}, kInt)));
  // Anything non-zero is true.
  EXPECT_TRUE(tensors_equal(make({0, 0.5, -2}, {3}).to(kBool), make({0, 1, 1}, {3}, kBool)));
  EXPECT_TRUE(tensors_equal(make({1, 0}, {2}, kBool).to(kFloat), make({1, 0}, {2}, kFloat)));
  // Integers wrap into uint8.
  EXPECT_TRUE(
      tensors_equal(make({-1, 256, 3}, {3}, kLong).to(kByte), make({255, 0, 3}, {3}, kByte)));
  // Double to Float rounds to nearest.
  Tensor third = make({1.0 / 3}, {1}, kDouble).to(kFloat);
  EXPECT_EQ(third.scalar_type(), kFloat);
  EXPECT_EQ(test::values(third)[0], static_cast<float>(1.0 / 3));
  Tensor big = make({16777217}, {1}, kLong).to(kFloat);  // 2^24 + 1 is not a float
  EXPECT_EQ(test::values(big)[0], 16777216.0f);
}

TEST_P(CopyOps, ToCopyMakesANewTensorKeepingDenseStrides) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = _to_copy(x, kDouble);
  EXPECT_FALSE(y.storage().is_same(x.storage()));
  EXPECT_TRUE(tensors_equal(y, make({1, 2, 3, 4, 5, 6}, {2, 3}, kDouble)));
  Tensor t = _to_copy(x.t());
  EXPECT_EQ(strides(t), (Ints{1, 3}));
  EXPECT_TRUE(tensors_equal(t, make({1, 4, 2, 5, 3, 6}, {3, 2})));
}

// A converted input is laid out as to() lays it out, strides of size-1 dimensions included, and
// an elementwise result follows it: torch 1.13's where(cond[3], long[3, 1].t(), float 0-d) has
// strides [1, 1] (Note [Output layout]); [3, 1] before.
TEST_P(CopyOps, ConvertedInputKeepsTheStridesOfItsSizeOneDimensions) {
  Tensor self = make({1, 2, 3}, {3, 1}, kLong).t();
  ASSERT_EQ(strides(self), (Ints{1, 1}));
  EXPECT_EQ(strides(_to_copy(self, kFloat)), (Ints{1, 1}));
  Tensor r = where(make({1, 0, 1}, {3}, kBool), self, make({1.5}, {}, kFloat));
  EXPECT_EQ(r.scalar_type(), kFloat);
  EXPECT_EQ(sizes(r), (Ints{1, 3}));
  EXPECT_EQ(strides(r), (Ints{1, 1}));
}

TEST_P(CopyOps, ToMetaKeepsTheMetadata) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3}, kInt);
  Tensor m = x.to(Device(kMeta), kInt);
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(sizes(m), (Ints{2, 3}));
  EXPECT_EQ(m.scalar_type(), kInt);
  Tensor md = _to_copy(x, TensorOptions().dtype(kDouble).device(kMeta));
  EXPECT_TRUE(md.is_meta());
  EXPECT_EQ(md.scalar_type(), kDouble);
  // And nothing comes back out of it.
  EXPECT_EQ(error_text<NotImplementedError>([&] { m.to(x.device(), kInt); }),
            "Cannot copy out of meta tensor; no data!");
}

// ---- copy_ --------------------------------------------------------------------------------------

TEST_P(CopyOps, CopyBroadcastsAndConverts) {
  Tensor dst = zeros({2, 3}, TensorOptions().device(dev()));
  const Tensor& result = dst.copy_(make({1, 2, 3}, {3}, kInt));
  EXPECT_TRUE(result.is_same(dst));
  EXPECT_TRUE(tensors_equal(dst, make({1, 2, 3, 1, 2, 3}, {2, 3})));
  // A 0-dim source fills everything.
  dst.copy_(make({-4.5}, {}, kDouble));
  EXPECT_TRUE(tensors_equal(dst, make({-4.5, -4.5, -4.5, -4.5, -4.5, -4.5}, {2, 3})));
  // A column broadcast along the rows.
  dst.copy_(make({7, 8}, {2, 1}, kLong));
  EXPECT_TRUE(tensors_equal(dst, make({7, 7, 7, 8, 8, 8}, {2, 3})));
}

TEST_P(CopyOps, CopyIntoNonContiguousDestinations) {
  Tensor base = zeros({2, 3}, TensorOptions().device(dev()));
  base.t().copy_(make({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_TRUE(tensors_equal(base, make({1, 3, 5, 2, 4, 6}, {2, 3})));
  // Every other column, at an offset.
  Tensor grid = zeros({2, 4}, TensorOptions().device(dev()).dtype(kLong));
  grid.slice(1, 1, 4, 2).copy_(make({9, 8, 7, 6}, {2, 2}, kFloat));
  EXPECT_TRUE(tensors_equal(grid, make({0, 9, 0, 8, 0, 7, 0, 6}, {2, 4}, kLong)));
  // From a transposed source.
  Tensor dst = empty({3, 2}, TensorOptions().device(dev()));
  dst.copy_(make({1, 2, 3, 4, 5, 6}, {2, 3}).t());
  EXPECT_TRUE(tensors_equal(dst, make({1, 4, 2, 5, 3, 6}, {3, 2})));
}

TEST_P(CopyOps, CopyErrors) {
  Tensor dst = zeros({3}, TensorOptions().device(dev()));
  EXPECT_EQ(test::error_of([&] {
              dst.copy_(make({1, 2, 3, 4, 5, 6}, {2, 3}));
            }),
            "output with shape [3] doesn't match the broadcast shape [2, 3]");
  Tensor expanded = zeros({1}, TensorOptions().device(dev())).expand({3});
  EXPECT_EQ(test::error_of([&] {
              expanded.copy_(make({1, 2, 3}, {3}));
            }),
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.");
  Tensor meta = empty({3}, TensorOptions().device(kMeta));
  EXPECT_EQ(error_text<NotImplementedError>([&] { dst.copy_(meta); }),
            "Cannot copy out of meta tensor; no data!");
  EXPECT_TRUE(tensors_equal(dst, make({0, 0, 0}, {3})));
}

TEST_P(CopyOps, CopyIntoMetaOnlyChecks) {
  Tensor meta = empty({2, 3}, TensorOptions().device(kMeta));
  meta.copy_(make({1, 2, 3}, {3}));
  EXPECT_EQ(sizes(meta), (Ints{2, 3}));
  EXPECT_EQ(test::error_of([&] { empty({3}, TensorOptions().device(kMeta)).copy_(meta); }),
            "output with shape [3] doesn't match the broadcast shape [2, 3]");
}

// ---- clone / contiguous -------------------------------------------------------------------------

TEST_P(CopyOps, CloneCopiesTheDataAndKeepsDenseLayouts) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor c = clone(x);
  EXPECT_FALSE(c.storage().is_same(x.storage()));
  EXPECT_TRUE(tensors_equal(c, x));
  c.fill_(0);
  EXPECT_TRUE(tensors_equal(x, make({1, 2, 3, 4, 5, 6}, {2, 3})));
  Tensor ct = x.t().clone();
  EXPECT_EQ(strides(ct), (Ints{1, 3}));
  EXPECT_TRUE(tensors_equal(ct, make({1, 4, 2, 5, 3, 6}, {3, 2})));
  Tensor cs = x.slice(1, 0, 3, 2).clone();
  EXPECT_EQ(strides(cs), (Ints{2, 1}));
  EXPECT_TRUE(tensors_equal(cs, make({1, 3, 4, 6}, {2, 2})));
}

TEST_P(CopyOps, ContiguousReturnsSelfOrACopy) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(x.contiguous().is_same(x));
  Tensor t = x.t();
  Tensor c = t.contiguous();
  EXPECT_FALSE(c.is_same(t));
  EXPECT_FALSE(c.storage().is_same(x.storage()));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(strides(c), (Ints{2, 1}));
  EXPECT_TRUE(tensors_equal(c, make({1, 4, 2, 5, 3, 6}, {3, 2})));
  // A row of a contiguous tensor is contiguous at an offset: no copy.
  Tensor row = x.select(0, 1);
  EXPECT_TRUE(row.contiguous().is_same(row));
}

// ---- fill_ / zero_ ------------------------------------------------------------------------------

TEST_P(CopyOps, FillConvertsTheValueToTheTensorsDtype) {
  Tensor f = zeros({3}, TensorOptions().device(dev()));
  EXPECT_TRUE(f.fill_(2.5).is_same(f));
  EXPECT_TRUE(tensors_equal(f, make({2.5, 2.5, 2.5}, {3})));
  Tensor i = zeros({2}, TensorOptions().device(dev()).dtype(kLong));
  i.fill_(2.7);
  EXPECT_TRUE(tensors_equal(i, make({2, 2}, {2}, kLong)));
  Tensor b = zeros({2}, TensorOptions().device(dev()).dtype(kBool));
  b.fill_(2);
  EXPECT_TRUE(tensors_equal(b, make({1, 1}, {2}, kBool)));
  fill_(f, -1);
  EXPECT_TRUE(tensors_equal(f, make({-1, -1, -1}, {3})));
}

TEST_P(CopyOps, FillAndZeroWriteOnlyTheView) {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  x.slice(1, 0, 3, 2).fill_(9);
  EXPECT_TRUE(tensors_equal(x, make({9, 2, 9, 9, 5, 9}, {2, 3})));
  x.select(0, 0).zero_();
  EXPECT_TRUE(tensors_equal(x, make({0, 0, 0, 9, 5, 9}, {2, 3})));
  zero_(x);
  EXPECT_TRUE(tensors_equal(x, make({0, 0, 0, 0, 0, 0}, {2, 3})));
  // Filling an expanded tensor is allowed (every element gets the same value), as in PyTorch.
  Tensor one = make({1}, {1});
  one.expand({3}).fill_(4);
  EXPECT_TRUE(tensors_equal(one, make({4}, {1})));
}

// ---- item ---------------------------------------------------------------------------------------

TEST_P(CopyOps, ItemReturnsTheValueInTheTensorsKind) {
  Scalar f = make({3.5}, {1}).item();
  EXPECT_TRUE(f.is_floating_point());
  EXPECT_EQ(f.to_double(), 3.5);
  Scalar i = make({-7}, {1, 1}, kInt).item();
  EXPECT_TRUE(i.is_integral(/*include_bool=*/false));
  EXPECT_EQ(i.to_int64(), -7);
  Scalar b = make({1}, {}, kBool).item();
  EXPECT_TRUE(b.is_boolean());
  EXPECT_TRUE(b.to_bool());
  EXPECT_EQ(make({2.25}, {}, kDouble).item<double>(), 2.25);
  EXPECT_EQ(make({200}, {1}, kByte).item<int64_t>(), 200);
  EXPECT_EQ(make({1.5}, {1}).item<float>(), 1.5f);
  // An element at an offset.
  EXPECT_EQ(make({1, 2, 3, 4}, {2, 2}).select(0, 1).select(0, 1).item<float>(), 4.0f);
}

TEST_P(CopyOps, ItemNeedsExactlyOneElement) {
  EXPECT_EQ(test::error_of([&] {
              make({1, 2}, {2}).item();
            }),
            "a Tensor with 2 elements cannot be converted to Scalar");
  EXPECT_EQ(test::error_of([&] { empty({0}, TensorOptions().device(dev())).item(); }),
            "a Tensor with 0 elements cannot be converted to Scalar");
  EXPECT_THROW(empty({1}, TensorOptions().device(kMeta)).item(), Error);
}

// ---- complex ------------------------------------------------------------------------------------

TEST_P(CopyOps, ComplexValuesConvertAsPyTorchDoes) {
  using test::complex_tensor;
  using test::complex_values;
  using C = test::Complex;
  Tensor z = complex_tensor({{1.5, -2}, {0, 0}, {-3, 0.25}}, {3}, kComplexFloat, dev());
  EXPECT_EQ(complex_values(z), (std::vector<C>{{1.5, -2}, {0, 0}, {-3, 0.25}}));
  // Between complex types both parts carry over; to a real type only the real part does.
  EXPECT_EQ(complex_values(z.to(kComplexDouble)), complex_values(z));
  EXPECT_EQ(values(z.to(kDouble)), (Doubles{1.5, 0, -3}));
  EXPECT_EQ(values(z.to(kInt)), (Doubles{1, 0, -3}));
  // To bool: non-zero in either part.
  EXPECT_EQ(values(complex_tensor({{0, 1}, {0, 0}, {2, 0}}, {3}, kComplexDouble, dev()).to(kBool)),
            (Doubles{1, 0, 1}));
  // From a real type the imaginary part is zero.
  EXPECT_EQ(complex_values(make({1, -2.5}, {2}, kHalf).to(kComplexFloat)),
            (std::vector<C>{{1, 0}, {-2.5, 0}}));
  EXPECT_EQ(complex_values(make({1, 0}, {2}, kBool).to(kComplexDouble)),
            (std::vector<C>{{1, 0}, {0, 0}}));
}

TEST_P(CopyOps, ComplexTensorsCopyThroughAnyStridesAndFill) {
  using test::complex_tensor;
  using test::complex_values;
  using C = test::Complex;
  Tensor z = complex_tensor({{1, 1}, {2, -2}, {3, 3}, {4, -4}, {5, 5}, {6, -6}}, {2, 3},
                            kComplexDouble, dev());
  EXPECT_EQ(complex_values(z.t().contiguous()),
            (std::vector<C>{{1, 1}, {4, -4}, {2, -2}, {5, 5}, {3, 3}, {6, -6}}));
  // Into a strided destination, converting ComplexDouble to ComplexFloat.
  Tensor dst = zeros({3, 2}, TensorOptions().dtype(kComplexFloat).device(dev())).t();
  dst.copy_(z);
  EXPECT_EQ(complex_values(dst), complex_values(z));
  // A broadcast real source.
  dst.copy_(make({7, 8, 9}, {3}));
  EXPECT_EQ(complex_values(dst), (std::vector<C>{{7, 0}, {8, 0}, {9, 0}, {7, 0}, {8, 0}, {9, 0}}));
  // fill_ and full with a complex value; a real value fills with a zero imaginary part.
  Tensor f = full({2}, Scalar(C(0.5, -1.5)), TensorOptions().dtype(kComplexFloat).device(dev()));
  EXPECT_EQ(complex_values(f), (std::vector<C>{{0.5, -1.5}, {0.5, -1.5}}));
  f.fill_(3);
  EXPECT_EQ(complex_values(f), (std::vector<C>{{3, 0}, {3, 0}}));
  EXPECT_EQ(complex_values(zeros({2}, TensorOptions().dtype(kComplexDouble).device(dev()))),
            (std::vector<C>{{0, 0}, {0, 0}}));
  // item() gives the complex value; cat joins complex tensors.
  EXPECT_EQ(z.select(0, 1).select(0, 2).item().to_complex_double(), C(6, -6));
  Tensor joined = cat({z.t(), z.t()}, 1);
  EXPECT_EQ(sizes(joined), (Ints{3, 4}));
  EXPECT_EQ(complex_values(joined.select(1, 3)), (std::vector<C>{{4, -4}, {5, 5}, {6, -6}}));
}

TEST_P(CopyOps, AComplexValueDoesNotFitARealTensor) {
  Tensor x = make({1, 2}, {2});
  EXPECT_EQ(test::error_of([&] { x.fill_(Scalar(test::Complex(1, 2))); }),
            "value cannot be converted to type float without overflow");
  EXPECT_EQ(values(x), (Doubles{1, 2})) << "nothing was written";
}

INSTANTIATE_TEST_SUITE_P(Devices, CopyOps, ::testing::ValuesIn(test::op_test_devices()),
                         [](const auto& info) {
                           return std::string(device_type_name(info.param.type));
                         });

}  // namespace
}  // namespace opd
