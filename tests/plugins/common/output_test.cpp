// Outputs of operators (common/output.h): where a kernel's new outputs come from (Note [Output
// allocation]), the out= resize rule, the memory-overlap checks, dtype conversion, density.
// Runs against the default plugins, which serve opd::empty, resize_ and copy_.

#include "common/output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "error_text.h"
#include "opd/error.h"
#include "opd/library.h"
#include "plugins/ops/op_test_util.h"
#include "warning_capture.h"

namespace opd::common {
namespace {

using test::tensor;
using test::values;
using test_util::error_text;
using Ints = std::vector<int64_t>;

class OutputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::load_default_plugins(); }
  void TearDown() override { set_output_allocator(DeviceType::CPU, nullptr); }
};

Ints vec(IntArrayRef r) { return r.vec(); }

// An allocator that counts its calls and records what it was asked for.
struct AllocatorCalls {
  int count = 0;
  Ints sizes;
  ScalarType dtype = ScalarType::Undefined;
  Device device{DeviceType::CPU};
};
AllocatorCalls g_calls;

Tensor counting_allocator(IntArrayRef sizes, ScalarType dtype, Device device) {
  ++g_calls.count;
  g_calls.sizes = sizes.vec();
  g_calls.dtype = dtype;
  g_calls.device = device;
  return empty(sizes, TensorOptions().dtype(dtype).device(device));
}

const std::string kInternalOverlap =
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.";
const std::string kPartialOverlap =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to "
    "a single memory location. Please clone() the tensor before performing the operation.";

// ---- empty_output ---------------------------------------------------------------------------

TEST_F(OutputTest, WithoutAnAllocatorEmptyOutputGoesThroughTheDispatcher) {
  Tensor t = empty_output(Ints{2, 3}, kDouble, Device(kCPU));
  EXPECT_EQ(vec(t.sizes()), (Ints{2, 3}));
  EXPECT_EQ(vec(t.strides()), (Ints{3, 1}));
  EXPECT_EQ(t.scalar_type(), kDouble);
  EXPECT_TRUE(t.is_cpu());
  Tensor m = empty_output(Ints{4}, kFloat, Device(kMeta));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(vec(m.sizes()), (Ints{4}));
}

TEST_F(OutputTest, ASetAllocatorServesItsDeviceTypeOnlyAndOnlyInThisCopyOfTheLibrary) {
  g_calls = {};
  set_output_allocator(DeviceType::CPU, &counting_allocator);
  Tensor t = empty_output(Ints{5, 2}, kInt, Device(kCPU));
  EXPECT_EQ(g_calls.count, 1);
  EXPECT_EQ(g_calls.sizes, (Ints{5, 2}));
  EXPECT_EQ(g_calls.dtype, kInt);
  EXPECT_TRUE(g_calls.device.is_cpu());
  EXPECT_EQ(vec(t.sizes()), (Ints{5, 2}));

  Tensor m = empty_output(Ints{2}, kFloat, Device(kMeta));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(g_calls.count, 1) << "Meta has no allocator here: the dispatcher serves it";

  // The CPU plugin links its own copy of opd_common, with its own allocator: its kernels do not
  // see the one set here.
  Tensor a = tensor({1, 2}, {2});
  Tensor sum = add(a, a);
  EXPECT_EQ(values(sum), (std::vector<double>{2, 4}));
  EXPECT_EQ(g_calls.count, 1);

  set_output_allocator(DeviceType::CPU, nullptr);
  Tensor again = empty_output(Ints{1}, kFloat, Device(kCPU));
  EXPECT_EQ(g_calls.count, 1) << "null: the dispatcher again";
  EXPECT_TRUE(again.is_cpu());
}

// Overriding aten::empty changes what factories return, not the outputs of kernels.
int g_empty_overrides = 0;

TEST_F(OutputTest, OverridingEmptyChangesFactoriesButNotKernelOutputs) {
  Library lib(Library::IMPL, "aten", DispatchKey::CPU);
  static float buffer[16];
  lib.impl("empty.memory_format", [](const OperatorHandle&, Stack* s) {
    ++g_empty_overrides;
    const std::vector<int64_t> sizes = (*s)[s->size() - 6].to_int_list();
    s->resize(s->size() - 6);
    s->push_back(from_blob(buffer, sizes, kFloat));
  });
  g_empty_overrides = 0;
  Tensor f = empty(Ints{2}, TensorOptions().dtype(kFloat));
  EXPECT_EQ(g_empty_overrides, 1);
  EXPECT_EQ(f.data_ptr(), static_cast<void*>(buffer));
  Tensor a = from_blob(buffer + 4, Ints{2}, kFloat);
  Tensor sum = add(a, a);
  EXPECT_EQ(g_empty_overrides, 1) << "add's output comes from the CPU plugin's own allocator";
  EXPECT_NE(sum.data_ptr(), static_cast<void*>(buffer));
}

// ---- resize_output --------------------------------------------------------------------------

TEST_F(OutputTest, ResizeOutputKeepsTheRightShapeResizesAnEmptyOneAndWarnsForTheRest) {
  Tensor same = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_FALSE(resize_output("add", same, Ints{2, 3}));
  EXPECT_EQ(vec(same.sizes()), (Ints{2, 3}));

  Tensor none = empty(Ints{0}, TensorOptions().dtype(kFloat));
  EXPECT_TRUE(resize_output("add", none, Ints{2, 3}));
  EXPECT_EQ(vec(none.sizes()), (Ints{2, 3}));
  EXPECT_EQ(vec(none.strides()), (Ints{3, 1}));

  test_util::WarningCapture warnings;
  Tensor full = tensor({1, 2, 3, 4}, {4});
  EXPECT_TRUE(resize_output("add", full, Ints{2, 3}));
  EXPECT_EQ(vec(full.sizes()), (Ints{2, 3}));
  Tensor empty_2d = empty(Ints{0, 3}, TensorOptions().dtype(kFloat));
  EXPECT_TRUE(resize_output("mul", empty_2d, Ints{3}));
  EXPECT_EQ(vec(empty_2d.sizes()), (Ints{3}));
  EXPECT_EQ(warnings.messages(),
            (std::vector<std::string>{test_util::resized_out_warning("[4]", "[2, 3]")}))
      << "PyTorch warns for an out with elements only";
}

// ---- Overlap --------------------------------------------------------------------------------

TEST_F(OutputTest, InternalOverlapIsAZeroStrideOverMoreThanOneElement) {
  Tensor base = tensor({1, 2, 3}, {3});
  Tensor expanded = make_view(base, Ints{2, 3}, Ints{0, 1}, 0);
  EXPECT_EQ(error_text<Error>([&] { check_no_internal_overlap(expanded); }), kInternalOverlap);
  Tensor one_row = make_view(base, Ints{1, 3}, Ints{0, 1}, 0);
  EXPECT_NO_THROW(check_no_internal_overlap(one_row)) << "a zero stride over size 1 is fine";
  Tensor square = tensor({1, 2, 3, 4}, {2, 2});
  Tensor transposed = make_view(square, Ints{2, 2}, Ints{1, 2}, 0);
  EXPECT_NO_THROW(check_no_internal_overlap(transposed));
  Tensor wide = tensor({1, 2, 3, 4, 5, 6}, {6});
  EXPECT_NO_THROW(check_no_internal_overlap(make_view(wide, Ints{3}, Ints{2}, 0)));
}

TEST_F(OutputTest, PartialOverlapIsRefusedAndTheSameMemoryWithTheSameStridesIsNot) {
  Tensor base = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  Tensor head = make_view(base, Ints{4}, Ints{1}, 0);
  Tensor tail = make_view(base, Ints{4}, Ints{1}, 4);
  Tensor middle = make_view(base, Ints{4}, Ints{1}, 2);
  Tensor head_again = make_view(base, Ints{4}, Ints{1}, 0);
  EXPECT_NO_THROW(check_no_partial_overlap(head, head));
  EXPECT_NO_THROW(check_no_partial_overlap(head, head_again)) << "in place through another view";
  EXPECT_NO_THROW(check_no_partial_overlap(head, tail)) << "disjoint halves";
  EXPECT_EQ(error_text<Error>([&] { check_no_partial_overlap(head, middle); }), kPartialOverlap);
  EXPECT_EQ(error_text<Error>([&] { check_no_partial_overlap(middle, tail); }), kPartialOverlap);
  // The same bytes in another order: the input would be read after it was written.
  Tensor square = make_view(base, Ints{2, 2}, Ints{2, 1}, 0);
  Tensor transposed = make_view(base, Ints{2, 2}, Ints{1, 2}, 0);
  EXPECT_EQ(error_text<Error>([&] { check_no_partial_overlap(square, transposed); }),
            kPartialOverlap);
  Tensor other = tensor({1, 2, 3, 4}, {4});
  EXPECT_NO_THROW(check_no_partial_overlap(head, other)) << "another storage";
}

TEST_F(OutputTest, MetaTensorsAreJudgedByTheirOffsets) {
  Tensor base = empty(Ints{8}, TensorOptions().dtype(kFloat).device(Device(kMeta)));
  Tensor head = make_view(base, Ints{4}, Ints{1}, 0);
  Tensor middle = make_view(base, Ints{4}, Ints{1}, 2);
  Tensor tail = make_view(base, Ints{4}, Ints{1}, 4);
  EXPECT_EQ(error_text<Error>([&] { check_no_partial_overlap(head, middle); }), kPartialOverlap);
  EXPECT_NO_THROW(check_no_partial_overlap(head, tail));
}

// ---- converted, density, shape_str ----------------------------------------------------------

TEST_F(OutputTest, ConvertedIsTheTensorItselfOrACopyInTheDtypeLaidOutAsToDoes) {
  Tensor f = tensor({1.5, -2.5, 3}, {3});
  EXPECT_TRUE(converted(f, kFloat).is_same(f));
  Tensor d = converted(f, kDouble);
  EXPECT_FALSE(d.is_same(f));
  EXPECT_EQ(d.scalar_type(), kDouble);
  EXPECT_EQ(values(d), (std::vector<double>{1.5, -2.5, 3}));
  Tensor square = tensor({1, 2, 3, 4}, {2, 2});
  Tensor transposed = make_view(square, Ints{2, 2}, Ints{1, 2}, 0);
  Tensor l = converted(transposed, kLong);
  EXPECT_EQ(vec(l.strides()), (Ints{1, 2})) << "dense: keeps its strides, as torch's to()";
  EXPECT_EQ(values(l), (std::vector<double>{1, 3, 2, 4}));
  Tensor sliced = make_view(square, Ints{2}, Ints{2}, 0);  // not dense: a dense copy
  EXPECT_EQ(vec(converted(sliced, kLong).strides()), (Ints{1}));
}

TEST_F(OutputTest, NonOverlappingAndDenseInAnyOrderOfDimensions) {
  Tensor base = tensor(std::vector<double>(24, 0.0), {2, 3, 4});
  EXPECT_TRUE(is_non_overlapping_and_dense(base));
  EXPECT_TRUE(is_non_overlapping_and_dense(make_view(base, Ints{4, 3, 2}, Ints{1, 4, 12}, 0)));
  EXPECT_TRUE(is_non_overlapping_and_dense(make_view(base, Ints{3, 1, 8}, Ints{8, 5, 1}, 0)))
      << "a dimension of size 1 may have any stride";
  EXPECT_FALSE(is_non_overlapping_and_dense(make_view(base, Ints{2, 3, 2}, Ints{12, 4, 1}, 0)))
      << "a slice leaves gaps";
  EXPECT_FALSE(is_non_overlapping_and_dense(make_view(base, Ints{2, 4}, Ints{0, 1}, 0)))
      << "an expanded tensor overlaps";
}

TEST_F(OutputTest, ShapeStrPrintsSizesAsPyTorchDoes) {
  EXPECT_EQ(shape_str(Ints{}), "[]");
  EXPECT_EQ(shape_str(Ints{7}), "[7]");
  EXPECT_EQ(shape_str(Ints{2, 3, 0}), "[2, 3, 0]");
}

}  // namespace
}  // namespace opd::common
