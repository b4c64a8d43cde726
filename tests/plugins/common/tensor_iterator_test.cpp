// TensorIterator (common/tensor_iterator.h, Note [TensorIterator]): the broadcast shape and its
// errors, the dtypes (promotion, given compute and output dtypes, the cast back into an out=
// tensor of another dtype), the output (new, out=, resized, in-place), the loop geometry (order by
// strides, merging, broadcast strides of 0), and the strided walk over any range of elements.
// Runs against the default plugins, which serve the new outputs and the conversions.

#include "common/tensor_iterator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "error_text.h"
#include "opd/error.h"
#include "plugins/ops/op_test_util.h"
#include "warning_capture.h"

namespace opd::common {
namespace {

using test::tensor;
using test::values;
using test_util::error_text;
using ::testing::ElementsAre;
using Ints = std::vector<int64_t>;

class TensorIteratorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::load_default_plugins(); }
};

Ints vec(IntArrayRef r) { return r.vec(); }

// The loop strides of operand k, in elements of its dtype, fastest dim first.
Ints loop_strides(const TensorIterator& it, int k) {
  Ints out;
  const auto item = static_cast<int64_t>(it.tensor(k).element_size());
  for (size_t d = 0; d < it.loop_shape().size(); ++d) {
    out.push_back(it.loop_stride(k, static_cast<int>(d)) / item);
  }
  return out;
}

// out = in1 + in2 over T elements, as a kernel's loop body.
template <class T>
void add_loop(char** data, const int64_t* strides, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<T*>(data[0] + i * strides[0]) =
        *reinterpret_cast<const T*>(data[1] + i * strides[1]) +
        *reinterpret_cast<const T*>(data[2] + i * strides[2]);
  }
}

// ---- Shapes -----------------------------------------------------------------------------------

TEST_F(TensorIteratorTest, BroadcastsInputsToOneShapeAndAllocatesAContiguousOutput) {
  Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 1, 3});
  Tensor b = tensor({10, 20, 30, 40}, {4, 1});
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), a, b);
  EXPECT_EQ(vec(it.shape()), (Ints{2, 4, 3}));
  EXPECT_EQ(it.numel(), 24);
  EXPECT_EQ(it.ntensors(), 3);
  const Tensor& out = it.output();
  EXPECT_EQ(vec(out.sizes()), (Ints{2, 4, 3}));
  EXPECT_EQ(vec(out.strides()), (Ints{12, 3, 1}));
  EXPECT_EQ(out.scalar_type(), kFloat);
  EXPECT_TRUE(out.is_cpu());
  EXPECT_TRUE(it.tensor(0).is_same(out)) << "same dtype: the loop writes the output itself";
}

TEST_F(TensorIteratorTest, ZeroDimInputsTakeTheOtherShape) {
  Tensor a = tensor({1, 2, 3}, {3});
  Tensor s = tensor({5}, Ints{});
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), s, a);
  EXPECT_EQ(vec(it.shape()), (Ints{3}));
  Tensor s2 = tensor({7}, Ints{});
  TensorIterator scalar = TensorIterator::binary_op("add", Tensor(), s, s2);
  EXPECT_EQ(vec(scalar.shape()), Ints{});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_THAT(vec(scalar.loop_shape()), ElementsAre());
}

TEST_F(TensorIteratorTest, ShapeMismatchNamesBothSizesAndTheDimension) {
  Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::binary_op("add", Tensor(), a, b); }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 1");
  Tensor c = tensor({1, 2}, {2});
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::binary_op("add", Tensor(), a, c); }),
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
            "dimension 1");
}

TEST_F(TensorIteratorTest, InPlaceOutputMustHaveTheBroadcastShape) {
  Tensor self = tensor({1, 2, 3}, {3});
  Tensor other = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::binary_op("add_", self, self, other); }),
            "output with shape [3] doesn't match the broadcast shape [2, 3]");
  // The other way round broadcasting is fine, and the output is self.
  Tensor row = tensor({1, 2, 3}, {3});
  TensorIterator it = TensorIterator::binary_op("add_", other, other, row);
  EXPECT_TRUE(it.output().is_same(other));
  EXPECT_TRUE(it.tensor(0).is_same(other));
}

TEST_F(TensorIteratorTest, OutTensorWithElementsOfAnotherShapeIsResizedWithAWarningAsAnEmptyOne) {
  Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor wrong = tensor({0, 0, 0, 0}, {4});
  {
    test_util::WarningCapture warnings;
    TensorIterator::binary_op("add", wrong, a, a);
    EXPECT_EQ(warnings.messages(),
              (std::vector<std::string>{test_util::resized_out_warning("[4]", "[2, 3]")}));
  }
  EXPECT_EQ(vec(wrong.sizes()), (Ints{2, 3}));

  Tensor empty_out = empty({0}, TensorOptions().dtype(kFloat));
  TensorIterator it = TensorIterator::binary_op("add", empty_out, a, a);
  EXPECT_EQ(vec(empty_out.sizes()), (Ints{2, 3}));
  EXPECT_TRUE(it.output().is_same(empty_out));
  it.for_each(add_loop<float>);
  EXPECT_EQ(values(empty_out), (std::vector<double>{2, 4, 6, 8, 10, 12}));
}

TEST_F(TensorIteratorTest, WithoutResizeTheOutputTakesPartInBroadcasting) {
  Tensor out = tensor({0, 0, 0, 0, 0, 0}, {2, 3});
  TensorIterator fill = TensorIterator::nullary_op("fill_", out);
  EXPECT_EQ(vec(fill.shape()), (Ints{2, 3}));
  EXPECT_EQ(fill.ntensors(), 1);
  EXPECT_TRUE(fill.output().is_same(out));
  Tensor small = tensor({0, 0}, {2});
  Tensor big = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_text<Error>([&] {
              TensorIteratorConfig("copy_")
                  .add_output(small)
                  .add_input(big)
                  .resize_outputs(false)
                  .build();
            }),
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
            "dimension 1");
  Tensor row = tensor({0, 0, 0}, {3});
  EXPECT_EQ(
      error_text<Error>([&] {
        TensorIteratorConfig("copy_").add_output(row).add_input(big).resize_outputs(false).build();
      }),
      "output with shape [3] doesn't match the broadcast shape [2, 3]");
}

// ---- Dtypes -----------------------------------------------------------------------------------

TEST_F(TensorIteratorTest, PromotesInputsAndConvertsThemToTheCommonDtype) {
  Tensor i = tensor({1, 2}, {2}, kLong);
  Tensor f = tensor({0.5, 0.25}, {2}, kFloat);
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), i, f);
  EXPECT_EQ(it.common_dtype(), kFloat);
  EXPECT_EQ(it.dtype(), kFloat);
  EXPECT_EQ(it.input_dtype(0), kFloat) << "the Long input is converted for the loop";
  EXPECT_FALSE(it.input(0).is_same(i));
  EXPECT_TRUE(it.input(1).is_same(f)) << "an input of the common dtype is used as it is";
  EXPECT_EQ(values(it.input(0)), (std::vector<double>{1, 2}));

  Tensor i32 = tensor({1, 2}, {2}, kInt);
  EXPECT_EQ(TensorIterator::binary_op("add", Tensor(), i32, i).common_dtype(), kLong);
  EXPECT_EQ(TensorIterator::binary_float_op("div", Tensor(), i32, i).common_dtype(), kFloat);
  Tensor d = tensor({1, 2}, {2}, kDouble);
  EXPECT_EQ(TensorIterator::binary_float_op("div", Tensor(), f, d).common_dtype(), kDouble);
}

TEST_F(TensorIteratorTest, ComparisonsWriteBool) {
  Tensor i = tensor({1, 2}, {2}, kLong);
  Tensor f = tensor({1, 3}, {2}, kFloat);
  TensorIterator it = TensorIterator::comparison_op("eq", Tensor(), i, f);
  EXPECT_EQ(it.common_dtype(), kFloat);
  EXPECT_EQ(it.dtype(), kBool);
  EXPECT_EQ(it.output().scalar_type(), kBool);
}

TEST_F(TensorIteratorTest, AnOutOfAWiderDtypeGetsATemporaryCastIntoIt) {
  Tensor a = tensor({1, 2, 3}, {3}, kLong);
  Tensor b = tensor({10, 20, 30}, {3}, kLong);
  Tensor out = tensor({0, 0, 0}, {3}, kDouble);
  TensorIterator it = TensorIterator::binary_op("add", out, a, b);
  EXPECT_TRUE(it.output().is_same(out));
  EXPECT_FALSE(it.tensor(0).is_same(out));
  EXPECT_EQ(it.dtype(), kLong) << "the loop writes the common dtype";
  it.for_each(add_loop<int64_t>);
  EXPECT_EQ(values(out), (std::vector<double>{0, 0, 0})) << "nothing reaches out before the cast";
  it.cast_outputs();
  EXPECT_EQ(values(out), (std::vector<double>{11, 22, 33}));
}

TEST_F(TensorIteratorTest, UnsafeCastsAndDtypeMismatchesAreRefused) {
  Tensor f = tensor({1, 2}, {2}, kFloat);
  Tensor long_out = tensor({0, 0}, {2}, kLong);
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::binary_op("add", long_out, f, f); }),
            "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::unary_op("neg", long_out, f); }),
            "Found dtype Long but expected Float");
  Tensor i = tensor({1, 2}, {2}, kLong);
  EXPECT_EQ(error_text<Error>([&] { TensorIteratorConfig("f").add_input(f).add_input(i).build(); }),
            "Found dtype Long but expected Float");
}

TEST_F(TensorIteratorTest, AGivenComputeDtypeConvertsEveryInput) {
  Tensor i = tensor({1, 2}, {2}, kInt);
  Tensor f = tensor({3, 4}, {2}, kFloat);
  TensorIterator it =
      TensorIteratorConfig("where").add_input(i).add_input(f).compute_dtype(kDouble).build();
  EXPECT_EQ(it.common_dtype(), kDouble);
  EXPECT_EQ(it.output().scalar_type(), kDouble);
  EXPECT_EQ(it.input_dtype(0), kDouble);
  EXPECT_EQ(it.input_dtype(1), kDouble);
}

// ---- Devices, overlap -------------------------------------------------------------------------

TEST_F(TensorIteratorTest, OnMetaNothingIsConvertedAndTheOutputHasNoMemory) {
  Tensor i = empty({2, 3}, TensorOptions().dtype(kLong).device(Device(kMeta)));
  Tensor f = empty({3}, TensorOptions().dtype(kFloat).device(Device(kMeta)));
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), i, f);
  EXPECT_TRUE(it.device().is_meta());
  EXPECT_TRUE(it.output().is_meta());
  EXPECT_EQ(vec(it.output().sizes()), (Ints{2, 3}));
  EXPECT_EQ(vec(it.output().strides()), (Ints{3, 1}));
  EXPECT_EQ(it.output().scalar_type(), kFloat);
  EXPECT_TRUE(it.input(0).is_same(i)) << "Meta inputs keep their dtype";
}

TEST_F(TensorIteratorTest, OperandsOnTwoDevicesAreRefused) {
  Tensor c = tensor({1, 2}, {2});
  Tensor m = empty({2}, TensorOptions().dtype(kFloat).device(Device(kMeta)));
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::binary_op("add", Tensor(), c, m); }),
            "Expected all tensors to be on the same device, but found at least two devices, meta "
            "and cpu!");
}

TEST_F(TensorIteratorTest, WrittenTensorsMayNotOverlapThemselvesOrPartOfAnInput) {
  Tensor base = tensor({1, 2, 3, 4}, {4});
  Tensor expanded = make_view(base, {2, 4}, {0, 1}, 0);
  Tensor x = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::binary_op("add", expanded, x, x); }),
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.");
  Tensor head = make_view(base, {3}, {1}, 0);
  Tensor tail = make_view(base, {3}, {1}, 1);
  EXPECT_EQ(error_text<Error>([&] { TensorIterator::unary_op("neg", head, tail); }),
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing the "
            "operation.");
  EXPECT_NO_THROW(TensorIterator::unary_op("neg_", head, head)) << "in place is fine";
}

// ---- Loop geometry ----------------------------------------------------------------------------

TEST_F(TensorIteratorTest, ContiguousOperandsMergeIntoOneDimension) {
  Tensor a = empty({2, 3, 4}, TensorOptions().dtype(kFloat));
  Tensor b = empty({2, 3, 4}, TensorOptions().dtype(kFloat));
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), a, b);
  EXPECT_EQ(vec(it.loop_shape()), (Ints{24}));
  EXPECT_TRUE(it.is_contiguous());
  for (int k = 0; k < 3; ++k) EXPECT_EQ(it.loop_stride(k, 0), 4) << "bytes, operand " << k;
}

TEST_F(TensorIteratorTest, SizeOneDimensionsAreDropped) {
  Tensor a = empty({2, 1, 3, 1}, TensorOptions().dtype(kDouble));
  TensorIterator it = TensorIterator::unary_op("neg", Tensor(), a);
  EXPECT_EQ(vec(it.loop_shape()), (Ints{6}));
  EXPECT_EQ(it.loop_stride(1, 0), 8);
}

TEST_F(TensorIteratorTest, ABroadcastOperandHasStrideZeroAndStopsTheMerge) {
  Tensor a = empty({2, 3}, TensorOptions().dtype(kFloat));
  Tensor row = empty({3}, TensorOptions().dtype(kFloat));
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), a, row);
  EXPECT_EQ(vec(it.loop_shape()), (Ints{3, 2}));
  EXPECT_EQ(loop_strides(it, 0), (Ints{1, 3}));
  EXPECT_EQ(loop_strides(it, 1), (Ints{1, 3}));
  EXPECT_EQ(loop_strides(it, 2), (Ints{1, 0}));
  EXPECT_FALSE(it.is_contiguous());
}

TEST_F(TensorIteratorTest, DimensionsAreOrderedByTheOutputsStridesFirst) {
  // A transposed out= tensor: its fastest dimension is dimension 0.
  Tensor storage = empty({3, 2}, TensorOptions().dtype(kFloat));
  Tensor out = make_view(storage, {2, 3}, {1, 2}, 0);
  Tensor a = empty({2, 3}, TensorOptions().dtype(kFloat));
  TensorIterator it = TensorIterator::unary_op("neg", out, a);
  EXPECT_EQ(vec(it.loop_shape()), (Ints{2, 3}));
  EXPECT_EQ(loop_strides(it, 0), (Ints{1, 2}));
  EXPECT_EQ(loop_strides(it, 1), (Ints{3, 1}));
  // A new output takes the transposed input's layout (Note [Output layout]): both are walked
  // as one dense run.
  Tensor t = make_view(storage, {2, 3}, {1, 2}, 0);
  TensorIterator fresh = TensorIterator::unary_op("neg", Tensor(), t);
  EXPECT_EQ(vec(fresh.output().strides()), (Ints{1, 2}));
  EXPECT_EQ(vec(fresh.loop_shape()), (Ints{6}));
  EXPECT_EQ(loop_strides(fresh, 0), (Ints{1}));
  EXPECT_EQ(loop_strides(fresh, 1), (Ints{1}));
}

// ---- Output layout (Note [Output layout]) -----------------------------------------------------

// The strides of the new output of add(a, b), a and b being views of new float tensors.
Ints add_strides(const Tensor& a, const Tensor& b) {
  return vec(TensorIterator::binary_op("add", Tensor(), a, b).output().strides());
}
Tensor view(Ints storage_sizes, Ints sizes, Ints strides, ScalarType dtype = kFloat) {
  return make_view(empty(storage_sizes, TensorOptions().dtype(dtype)), sizes, strides, 0);
}

TEST_F(TensorIteratorTest, InputsOfOneShapeGiveContiguousChannelsLastOrTheirCommonStrides) {
  const Tensor contiguous = view({2, 3, 4, 5}, {2, 3, 4, 5}, {60, 20, 5, 1});
  const Tensor nhwc = view({2, 3, 4, 5}, {2, 3, 4, 5}, {60, 1, 15, 3});
  EXPECT_EQ(add_strides(contiguous, contiguous), (Ints{60, 20, 5, 1}));
  EXPECT_EQ(add_strides(nhwc, nhwc), (Ints{60, 1, 15, 3}));
  // Dense with the same strides: those strides.
  const Tensor permuted = view({24}, {2, 3, 4}, {1, 8, 2});
  EXPECT_EQ(add_strides(permuted, permuted), (Ints{1, 8, 2}));
  // N, C, 1, 1 in channels-last is also contiguous: contiguous wins, as in PyTorch.
  const Tensor nc11 = view({6}, {2, 3, 1, 1}, {3, 1, 3, 3});
  EXPECT_EQ(add_strides(nc11, nc11), (Ints{3, 1, 1, 1}));
}

TEST_F(TensorIteratorTest, TheFirstInputThatIsNotBroadcastDecidesTheOrder) {
  const Tensor t = view({12}, {3, 4}, {1, 3});  // transposed
  const Tensor c = view({12}, {3, 4}, {4, 1});
  EXPECT_EQ(add_strides(t, c), (Ints{1, 3}));
  EXPECT_EQ(add_strides(c, t), (Ints{4, 1}));
  // A row is broadcast along dim 0: the transposed input decides, whatever the order.
  const Tensor row = view({4}, {4}, {1});
  EXPECT_EQ(add_strides(row, t), (Ints{1, 3}));
  EXPECT_EQ(add_strides(t, row), (Ints{1, 3}));
  // Channels-last against a per-channel (C, 1, 1) tensor stays channels-last.
  const Tensor nhwc = view({2, 3, 4, 5}, {2, 3, 4, 5}, {60, 1, 15, 3});
  const Tensor per_channel = view({3}, {3, 1, 1}, {1, 1, 1});
  EXPECT_EQ(add_strides(per_channel, nhwc), (Ints{60, 1, 15, 3}));
  // Nobody decides between two broadcast dimensions: the reversed order, contiguous.
  const Tensor column = view({3}, {3, 1}, {1, 1});
  EXPECT_EQ(add_strides(column, row), (Ints{4, 1}));
}

TEST_F(TensorIteratorTest, ASlicedInputGivesADenseOutputInItsOrder) {
  const Tensor sliced_t = view({8, 3}, {3, 4}, {1, 6});  // t() of every other row
  TensorIterator it = TensorIterator::unary_op("neg", Tensor(), sliced_t);
  EXPECT_EQ(vec(it.output().strides()), (Ints{1, 3}));
}

TEST_F(TensorIteratorTest, AConvertedInputCountsWithTheLayoutOfItsCopy) {
  // An expanded int64 row is copied to float densely (contiguous), and so decides as a full
  // contiguous input would: PyTorch's to() before its layout step.
  const Tensor int_row = view({4}, {3, 4}, {0, 1}, kLong);
  const Tensor t = view({12}, {3, 4}, {1, 3});
  EXPECT_EQ(add_strides(int_row, t), (Ints{4, 1}));
  const Tensor float_row = view({4}, {3, 4}, {0, 1});
  EXPECT_EQ(add_strides(float_row, t), (Ints{1, 3}));
}

TEST_F(TensorIteratorTest, MetaOutputsAndResizedOutTensorsAreLaidOutAsNewOnes) {
  const TensorOptions meta = TensorOptions().dtype(kFloat).device(Device(kMeta));
  Tensor t = make_view(empty({12}, meta), {3, 4}, {1, 3}, 0);
  EXPECT_EQ(vec(TensorIterator::unary_op("neg", Tensor(), t).output().strides()), (Ints{1, 3}));
  Tensor out = empty({0}, TensorOptions().dtype(kFloat));
  const Tensor a = view({12}, {3, 4}, {1, 3});
  TensorIterator it = TensorIterator::unary_op("neg", out, a);
  EXPECT_TRUE(it.output().is_same(out));
  EXPECT_EQ(vec(out.sizes()), (Ints{3, 4}));
  EXPECT_EQ(vec(out.strides()), (Ints{1, 3}));
  // An out= tensor of the right shape keeps its strides.
  Tensor kept = empty({3, 4}, TensorOptions().dtype(kFloat));
  (void)TensorIterator::unary_op("neg", kept, a);
  EXPECT_EQ(vec(kept.strides()), (Ints{4, 1}));
}

TEST_F(TensorIteratorTest, InferDenseStridesKeepsTheOrderAndLeavesZeroStridesInPlace) {
  const auto dense = [](const Ints& sizes, const Ints& strides) {
    const DimVector d = infer_dense_strides(sizes, strides);
    return Ints(d.begin(), d.end());
  };
  EXPECT_EQ(dense({3, 4}, {1, 6}), (Ints{1, 3}));
  EXPECT_EQ(dense({3, 4}, {0, 1}), (Ints{4, 1}));
  EXPECT_EQ(dense({2, 3, 4}, {1, 16, 2}), (Ints{1, 8, 2}));
  EXPECT_EQ(dense({}, {}), (Ints{}));
}

TEST_F(TensorIteratorTest, ASlicedInputKeepsItsRowsApart) {
  Tensor base = empty({4, 6}, TensorOptions().dtype(kFloat));
  Tensor cols = make_view(base, {4, 3}, {6, 1}, 2);
  TensorIterator it = TensorIterator::unary_op("neg", Tensor(), cols);
  EXPECT_EQ(vec(it.loop_shape()), (Ints{3, 4}));
  EXPECT_EQ(loop_strides(it, 0), (Ints{1, 3}));
  EXPECT_EQ(loop_strides(it, 1), (Ints{1, 6}));
}

// ---- The walk ---------------------------------------------------------------------------------

TEST_F(TensorIteratorTest, TheLoopVisitsEveryElementOnceOverAnyRanges) {
  // out[i][j] = a[i][j] + row[j], with a transposed so that no dimension merges.
  Tensor storage = tensor({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3});
  Tensor a = make_view(storage, {3, 4}, {1, 3}, 0);  // a[i][j] = 3j + i
  Tensor row = tensor({100, 200, 300, 400}, {4});
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), a, row);
  ASSERT_EQ(it.loop_shape().size(), 2u);
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) expected.push_back(3 * j + i + 100 * (j + 1));
  }
  it.serial_for_each(add_loop<float>, 0, it.numel());
  EXPECT_EQ(values(it.output()), expected);

  // Split into uneven chunks (starting mid-row): the same result.
  Tensor out = tensor(std::vector<double>(12, -1.0), {3, 4});
  TensorIterator again = TensorIterator::binary_op("add", out, a, row);
  static std::vector<std::pair<int64_t, int64_t>> chunks;
  chunks.clear();
  again.for_each(
      add_loop<float>,
      [](int64_t begin, int64_t end, int64_t, const std::function<void(int64_t, int64_t)>& fn) {
        for (int64_t b = begin; b < end;) {
          const int64_t e = std::min(end, b + (b % 2 == 0 ? 5 : 2));
          chunks.emplace_back(b, e);
          fn(b, e);
          b = e;
        }
      },
      /*grain_size=*/1);
  EXPECT_GT(chunks.size(), 2u) << "the splitter ran";
  EXPECT_EQ(values(out), expected);
}

TEST_F(TensorIteratorTest, NoElementsNoCalls) {
  Tensor a = empty({0, 3}, TensorOptions().dtype(kFloat));
  TensorIterator it = TensorIterator::unary_op("neg", Tensor(), a);
  EXPECT_EQ(it.numel(), 0);
  EXPECT_EQ(vec(it.output().sizes()), (Ints{0, 3}));
  int calls = 0;
  it.for_each([&](char**, const int64_t*, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST_F(TensorIteratorTest, AZeroDimIterationRunsTheLoopOnceForOneElement) {
  Tensor a = tensor({2}, Ints{});
  Tensor b = tensor({3}, Ints{});
  TensorIterator it = TensorIterator::binary_op("add", Tensor(), a, b);
  int64_t seen = 0;
  it.for_each([&](char** data, const int64_t* strides, int64_t n) {
    seen += n;
    add_loop<float>(data, strides, n);
  });
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(it.output().item<float>(), 5.0f);
}

}  // namespace
}  // namespace opd::common
