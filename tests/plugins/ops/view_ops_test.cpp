// Views: view, as_strided, transpose, t, permute, expand, squeeze, unsqueeze, slice, select,
// reshape and flatten share their base's storage and version counter, so writes through a view
// are visible in the base; reshape copies only when it must; errors and IndexErrors read as
// PyTorch 1.13's. Also cat, which always makes a new tensor.

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
using test_util::error_text;
using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

class ViewOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  Tensor make(const Doubles& v, const Ints& shape, ScalarType dtype = kFloat) const {
    return test::tensor(v, shape, dtype, GetParam());
  }
  // 0, 1, ..., n - 1 in `shape`.
  Tensor iota(const Ints& shape) const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    Doubles v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
    return make(v, shape);
  }
};

// Same storage and version counter as `base`.
::testing::AssertionResult is_view_of(const Tensor& view, const Tensor& base) {
  if (!view.storage().is_same(base.storage()))
    return ::testing::AssertionFailure() << "new storage";
  if (view.unsafe_get_impl()->version_counter() != base.unsafe_get_impl()->version_counter()) {
    return ::testing::AssertionFailure() << "different version counter";
  }
  return ::testing::AssertionSuccess();
}

// ---- each view shares storage -------------------------------------------------------------------

TEST_P(ViewOps, ViewSharesStorageAndWritesShowThrough) {
  Tensor x = iota({2, 3});
  Tensor v = x.view({3, 2});
  EXPECT_TRUE(is_view_of(v, x));
  EXPECT_EQ(v.data_ptr(), x.data_ptr());
  EXPECT_EQ(strides(v), (Ints{2, 1}));
  v.select(0, 2).fill_(-1);
  EXPECT_TRUE(tensors_equal(x, make({0, 1, 2, 3, -1, -1}, {2, 3})));
  EXPECT_EQ(sizes(x.view({-1})), (Ints{6}));
  EXPECT_EQ(sizes(x.view({2, -1, 1})), (Ints{2, 3, 1}));
  EXPECT_EQ(sizes(make({5}, {}).view({1})), (Ints{1}));
  EXPECT_EQ(make({5}, {1}).view(IntArrayRef{}).dim(), 0);
}

TEST_P(ViewOps, ViewErrors) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(test::error_of([&] { x.t().view({6}); }),
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  EXPECT_EQ(test::error_of([&] {
              x.view({2, 5});
            }),
            "shape '[2, 5]' is invalid for input of size 6");
  EXPECT_EQ(test::error_of([&] { x.view({-1, -1}); }), "only one dimension can be inferred");
  EXPECT_EQ(test::error_of([&] { x.view({2, -2}); }), "invalid shape dimension -2");
  EXPECT_EQ(test::error_of([&] {
              x.view({3, -1, 0});
            }),
            "shape '[3, -1, 0]' is invalid for input of size 6");
}

TEST_P(ViewOps, AsStrided) {
  Tensor x = iota({6});
  Tensor a = x.as_strided({2, 2}, {1, 2});
  EXPECT_TRUE(is_view_of(a, x));
  EXPECT_TRUE(tensors_equal(a, make({0, 2, 1, 3}, {2, 2})));
  Tensor b = as_strided(x, {2, 2}, {1, 2}, 1);
  EXPECT_EQ(b.storage_offset(), 1);
  EXPECT_TRUE(tensors_equal(b, make({1, 3, 2, 4}, {2, 2})));
  // Overlapping views are allowed.
  EXPECT_TRUE(tensors_equal(x.as_strided({2, 3}, {1, 1}), make({0, 1, 2, 1, 2, 3}, {2, 3})));
  b.fill_(9);
  EXPECT_TRUE(tensors_equal(x, make({0, 9, 9, 9, 9, 5}, {6})));
  EXPECT_EQ(test::error_of([&] {
              x.as_strided({2, 2}, {-1, 1});
            }),
            "as_strided: Negative strides are not supported at the moment, got strides: [-1, 1]");
  EXPECT_EQ(test::error_of([&] {
              x.as_strided({2, 2}, {1});
            }),
            "mismatch in length of strides and shape");
  EXPECT_EQ(test::error_of([&] {
              x.as_strided({2, 2}, {1, 2}, -1);
            }),
            "Tensor: invalid storage offset -1");
  EXPECT_THAT(test::error_of([&] {
                iota({4}).as_strided({3, 3}, {3, 1});
              }),
              ::testing::HasSubstr("sizes [3, 3], strides [3, 1], storage offset 0, and itemsize 4 "
                                   "requiring a storage size of 36 are out of bounds for storage "
                                   "of size 16"));
}

TEST_P(ViewOps, TransposeTAndPermute) {
  Tensor x = iota({2, 3, 4});
  Tensor p = x.permute({2, 0, 1});
  EXPECT_TRUE(is_view_of(p, x));
  EXPECT_EQ(sizes(p), (Ints{4, 2, 3}));
  EXPECT_EQ(strides(p), (Ints{1, 12, 4}));
  Tensor tr = transpose(x, 0, 2);
  EXPECT_EQ(sizes(tr), (Ints{4, 3, 2}));
  EXPECT_EQ(strides(tr), (Ints{1, 4, 12}));
  EXPECT_EQ(sizes(x.transpose(-1, 0)), (Ints{4, 3, 2}));
  EXPECT_EQ(strides(x.transpose(1, 1)), (Ints{12, 4, 1}));

  Tensor m = iota({2, 3});
  Tensor mt = opd::t(m);
  EXPECT_TRUE(is_view_of(mt, m));
  EXPECT_TRUE(tensors_equal(mt, make({0, 3, 1, 4, 2, 5}, {3, 2})));
  mt.select(0, 2).fill_(7);  // m's column 2
  EXPECT_TRUE(tensors_equal(m, make({0, 1, 7, 3, 4, 7}, {2, 3})));
  EXPECT_EQ(sizes(iota({3}).t()), (Ints{3}));
  EXPECT_EQ(make({1}, {}).t().dim(), 0);

  EXPECT_EQ(test::error_of([&] { x.t(); }),
            "t() expects a tensor with <= 2 dimensions, but self is 3D");
  EXPECT_EQ(test::error_of([&] {
              m.permute({0, 0});
            }),
            "permute(): duplicate dims are not allowed.");
  EXPECT_EQ(test::error_of([&] {
              m.permute({0, 1, 2});
            }),
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to "
            "len(dims) = 3");
}

TEST_P(ViewOps, ExpandUsesZeroStrides) {
  Tensor col = make({1, 2, 3}, {3, 1});
  Tensor e = col.expand({3, 4});
  EXPECT_TRUE(is_view_of(e, col));
  EXPECT_EQ(strides(e), (Ints{1, 0}));
  EXPECT_TRUE(tensors_equal(e, make({1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, {3, 4})));
  EXPECT_EQ(strides(make({1, 2, 3}, {3}).expand({2, 3})), (Ints{0, 1}));
  EXPECT_EQ(sizes(col.expand({-1, 2})), (Ints{3, 2}));
  EXPECT_EQ(strides(col.expand({2, 3, 4})), (Ints{0, 1, 0}));
  EXPECT_EQ(test::error_of([&] {
              make({1, 2, 3}, {3}).expand({2, 4});
            }),
            "The expanded size of the tensor (4) must match the existing size (3) at "
            "non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]");
  EXPECT_EQ(test::error_of([&] {
              iota({2, 3}).expand({3});
            }),
            "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must "
            "be greater or equal to the number of dimensions in the tensor (2)");
  EXPECT_EQ(test::error_of([&] {
              make({1, 2, 3}, {3}).expand({-1, 3});
            }),
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
            "dimension 0");
}

TEST_P(ViewOps, SqueezeAndUnsqueeze) {
  Tensor x = iota({2, 1, 3});
  Tensor s = x.squeeze(1);
  EXPECT_TRUE(is_view_of(s, x));
  EXPECT_EQ(sizes(s), (Ints{2, 3}));
  EXPECT_EQ(sizes(squeeze(x, 0)), (Ints{2, 1, 3}));  // not size 1: unchanged
  EXPECT_EQ(sizes(x.squeeze(-2)), (Ints{2, 3}));
  Tensor y = iota({2, 3, 4});
  EXPECT_EQ(strides(y.unsqueeze(1)), (Ints{12, 12, 4, 1}));
  EXPECT_EQ(strides(unsqueeze(y, -1)), (Ints{12, 4, 1, 1}));
  EXPECT_EQ(sizes(y.unsqueeze(3)), (Ints{2, 3, 4, 1}));
  EXPECT_EQ(sizes(make({1}, {}).unsqueeze(0)), (Ints{1}));
  EXPECT_TRUE(is_view_of(y.unsqueeze(0), y));
}

TEST_P(ViewOps, SliceAndSelectOffsetIntoTheStorage) {
  Tensor y = iota({10});
  EXPECT_TRUE(tensors_equal(y.slice(0, -3), make({7, 8, 9}, {3})));
  EXPECT_TRUE(tensors_equal(y.slice(0, 2, 100), make({2, 3, 4, 5, 6, 7, 8, 9}, {8})));
  EXPECT_EQ(sizes(y.slice(0, 7, 3)), (Ints{0}));
  EXPECT_TRUE(tensors_equal(y.slice(0, std::nullopt, std::nullopt, 3), make({0, 3, 6, 9}, {4})));
  EXPECT_TRUE(tensors_equal(slice(y, 0, -100, 2), make({0, 1}, {2})));

  Tensor x = iota({2, 3, 4});
  Tensor s = x.slice(1, 1, 3);
  EXPECT_TRUE(is_view_of(s, x));
  EXPECT_EQ(strides(s), (Ints{12, 4, 1}));
  EXPECT_EQ(s.storage_offset(), 4);
  EXPECT_EQ(x.slice(2, 1, 3).storage_offset(), 1);
  Tensor row = x.select(0, 1);
  EXPECT_EQ(row.storage_offset(), 12);
  EXPECT_EQ(sizes(row), (Ints{3, 4}));
  EXPECT_TRUE(tensors_equal(select(x, 2, -1), make({3, 7, 11, 15, 19, 23}, {2, 3})));
  EXPECT_EQ(iota({3}).select(0, -3).dim(), 0);
  // Writes through a slice of a slice land in the base.
  x.slice(1, 1, 3).select(2, 0).fill_(-1);
  EXPECT_EQ(x.select(0, 0).select(0, 1).select(0, 0).item<float>(), -1.0f);
  EXPECT_EQ(x.select(0, 1).select(0, 2).select(0, 0).item<float>(), -1.0f);
  EXPECT_EQ(x.select(0, 1).select(0, 0).select(0, 0).item<float>(), 12.0f);
}

TEST_P(ViewOps, SliceAndSelectErrors) {
  EXPECT_EQ(error_text<IndexError>([&] { iota({3}).select(0, 5); }),
            "select(): index 5 out of range for tensor of size [3] at dimension 0");
  EXPECT_EQ(error_text<IndexError>([&] { iota({3}).select(0, -4); }),
            "select(): index -4 out of range for tensor of size [3] at dimension 0");
  EXPECT_EQ(error_text<IndexError>([&] { make({1}, {}).select(0, 0); }),
            "select() cannot be applied to a 0-dim tensor.");
  EXPECT_EQ(error_text<IndexError>([&] { make({1}, {}).slice(0, 0, 1); }),
            "slice() cannot be applied to a 0-dim tensor.");
  EXPECT_EQ(test::error_of([&] { iota({3}).slice(0, 0, 3, 0); }), "slice step must be positive");
  EXPECT_EQ(test::error_of([&] { iota({3}).slice(0, 0, 3, -1); }), "slice step must be positive");
}

TEST_P(ViewOps, DimensionsOutOfRangeAreIndexErrors) {
  Tensor m = iota({2, 3});
  const std::string two = "Dimension out of range (expected to be in range of [-2, 1], but got 2)";
  EXPECT_EQ(error_text<IndexError>([&] { m.transpose(0, 2); }), two);
  EXPECT_EQ(error_text<IndexError>([&] { m.select(2, 0); }), two);
  EXPECT_EQ(error_text<IndexError>([&] { m.slice(2); }), two);
  EXPECT_EQ(error_text<IndexError>([&] { m.squeeze(2); }), two);
  EXPECT_EQ(error_text<IndexError>([&] { m.permute({0, 2}); }), two);
  EXPECT_EQ(error_text<IndexError>([&] { m.unsqueeze(3); }),
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_EQ(error_text<IndexError>([&] { m.unsqueeze(-4); }),
            "Dimension out of range (expected to be in range of [-3, 2], but got -4)");
  EXPECT_EQ(error_text<IndexError>([&] { m.flatten(0, 3); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 3)");
  EXPECT_EQ(error_text<IndexError>([&] { make({1}, {}).transpose(0, 1); }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  EXPECT_EQ(error_text<IndexError>([&] { cat({m, m}, 2); }), two);
}

// ---- reshape / flatten --------------------------------------------------------------------------

TEST_P(ViewOps, ReshapeViewsWhenItCanAndCopiesWhenItMust) {
  Tensor x = iota({2, 3});
  Tensor r = x.reshape({3, 2});
  EXPECT_TRUE(is_view_of(r, x));
  EXPECT_EQ(sizes(reshape(x, {-1})), (Ints{6}));
  // A transposed tensor cannot be flattened without a copy.
  Tensor c = x.t().reshape({6});
  EXPECT_FALSE(c.storage().is_same(x.storage()));
  EXPECT_TRUE(tensors_equal(c, make({0, 3, 1, 4, 2, 5}, {6})));
  c.fill_(0);
  EXPECT_TRUE(tensors_equal(x, iota({2, 3})));
  // ... but can be split without one.
  EXPECT_TRUE(is_view_of(x.t().reshape({3, 1, 2}), x));
  EXPECT_EQ(sizes(make({5}, {}).reshape({-1})), (Ints{1}));
  EXPECT_EQ(test::error_of([&] { x.reshape({4}); }), "shape '[4]' is invalid for input of size 6");
  EXPECT_EQ(test::error_of([&] {
              x.reshape({5, -1});
            }),
            "shape '[5, -1]' is invalid for input of size 6");
}

TEST_P(ViewOps, Flatten) {
  Tensor x = iota({2, 3, 4});
  Tensor f = x.flatten();
  EXPECT_TRUE(is_view_of(f, x));
  EXPECT_EQ(sizes(f), (Ints{24}));
  EXPECT_EQ(sizes(x.flatten(1)), (Ints{2, 12}));
  EXPECT_EQ(sizes(flatten(x, 0, 1)), (Ints{6, 4}));
  EXPECT_EQ(sizes(x.flatten(-2, -1)), (Ints{2, 12}));
  EXPECT_EQ(sizes(make({1}, {}).flatten()), (Ints{1}));
  Tensor copied = x.transpose(0, 1).flatten(0, 1);
  EXPECT_FALSE(copied.storage().is_same(x.storage()));
  EXPECT_EQ(copied.select(0, 1).select(0, 0).item<float>(), 12.0f);
  EXPECT_EQ(test::error_of([&] { x.flatten(2, 1); }),
            "flatten() has invalid args: start_dim cannot come after end_dim");
}

// ---- version counters ---------------------------------------------------------------------------

TEST_P(ViewOps, ViewsShareTheVersionCounter) {
  Tensor x = iota({2, 3});
  Tensor views[] = {x.view({6}),
                    x.t(),
                    x.permute({1, 0}),
                    x.select(0, 1),
                    x.slice(1, 0, 2),
                    x.unsqueeze(0),
                    x.as_strided({2}, {1}),
                    x.reshape({3, 2}),
                    x.flatten(),
                    x.unsqueeze(1).squeeze(1),
                    x.select(0, 0).expand({4, 3})};
  const uint32_t v0 = x.version();
  for (const Tensor& v : views) EXPECT_TRUE(is_view_of(v, x));
  x.select(0, 0).add_(1);
  for (const Tensor& v : views) EXPECT_EQ(v.version(), v0 + 1);
  views[1].mul_(2);
  EXPECT_EQ(x.version(), v0 + 2);
  EXPECT_TRUE(tensors_equal(x, make({2, 4, 6, 6, 8, 10}, {2, 3})));
  // A copy has its own counter.
  Tensor c = x.clone();
  c.add_(1);
  EXPECT_EQ(x.version(), v0 + 2);
  // Functional operators leave their inputs' versions alone.
  Tensor sum = x + views[0].view({2, 3});
  EXPECT_EQ(x.version(), v0 + 2);
  EXPECT_EQ(sum.version(), 0u);
}

// ---- cat ----------------------------------------------------------------------------------------

TEST_P(ViewOps, CatJoinsAlongADimension) {
  Tensor a = iota({2, 3}), b = make({6, 7, 8}, {1, 3});
  Tensor r = cat({a, b});
  EXPECT_FALSE(r.storage().is_same(a.storage()));
  EXPECT_TRUE(tensors_equal(r, make({0, 1, 2, 3, 4, 5, 6, 7, 8}, {3, 3})));
  EXPECT_TRUE(
      tensors_equal(cat({a, make({-1, -2}, {2, 1})}, 1), make({0, 1, 2, -1, 3, 4, 5, -2}, {2, 4})));
  EXPECT_TRUE(tensors_equal(cat({a, make({-1, -2}, {2, 1})}, -1),
                            make({0, 1, 2, -1, 3, 4, 5, -2}, {2, 4})));
  // Non-contiguous inputs.
  EXPECT_TRUE(
      tensors_equal(cat({a.t(), make({9, 9}, {1, 2})}), make({0, 3, 1, 4, 2, 5, 9, 9}, {4, 2})));
  EXPECT_TRUE(tensors_equal(cat({a.slice(1, 0, 3, 2), a.select(1, 1).unsqueeze(1)}, 1),
                            make({0, 2, 1, 3, 5, 4}, {2, 3})));
  // One tensor: still a copy.
  Tensor one = cat({a});
  EXPECT_FALSE(one.storage().is_same(a.storage()));
  EXPECT_TRUE(tensors_equal(one, a));
  // Legacy: a 1-D empty tensor is skipped whatever the other shapes.
  EXPECT_EQ(sizes(cat({a, empty({0}, TensorOptions().device(GetParam()))})), (Ints{2, 3}));
}

TEST_P(ViewOps, CatPromotes) {
  Tensor r = cat({make({1, 2}, {2}, kInt), make({0.5}, {1}, kDouble)});
  EXPECT_TRUE(tensors_equal(r, make({1, 2, 0.5}, {3}, kDouble)));
  EXPECT_EQ(cat({make({1}, {1}, kBool), make({2}, {1}, kByte)}).scalar_type(), kByte);
  EXPECT_EQ(cat({make({1}, {1}, kInt), make({2}, {1}, kFloat)}).scalar_type(), kFloat);
}

TEST_P(ViewOps, CatErrors) {
  Tensor a = iota({2, 3});
  EXPECT_EQ(test::error_of([&] {
              cat({a, iota({3, 2})}, 1);
            }),
            "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 "
            "for tensor number 1 in the list.");
  // No tensor to dispatch on: the dispatcher's own error, as at::cat({}) in C++ (Python's
  // argument parser catches the empty list earlier).
  EXPECT_THAT(test::error_of([&] { cat(TensorList{}); }),
              ::testing::StartsWith("There were no tensor arguments to this function"));
  EXPECT_EQ(test::error_of([&] {
              cat({make({1}, {}), make({2}, {})});
            }),
            "zero-dimensional tensor (at position 0) cannot be concatenated");
  EXPECT_EQ(test::error_of([&] {
              cat({a, iota({3})});
            }),
            "Tensors must have same number of dimensions: got 2 and 1");
}

// ---- shape operators and advanced indexing (issue #31)
// -------------------------------------------

TEST_P(ViewOps, SplitChunkUnbindNarrowMovedimAndDiagonalAreViews) {
  Tensor x = iota({3, 4});
  std::vector<Tensor> parts = split(x, 3, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(sizes(parts[1]), (Ints{3, 1}));
  for (const Tensor& p : parts) EXPECT_TRUE(is_view_of(p, x));
  EXPECT_EQ(sizes(split(x, Ints{1, 2}, 0)[1]), (Ints{2, 4}));
  EXPECT_EQ(chunk(x, 3, 1).size(), 2u);
  std::vector<Tensor> rows = unbind(x, 0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(is_view_of(rows[2], x));
  EXPECT_TRUE(tensors_equal(rows[2], make({8, 9, 10, 11}, {4})));
  Tensor n = narrow(x, 1, -3, 2);
  EXPECT_TRUE(is_view_of(n, x));
  EXPECT_TRUE(tensors_equal(n, make({1, 2, 5, 6, 9, 10}, {3, 2})));
  Tensor m = movedim(iota({2, 3, 4}), 0, 2);
  EXPECT_EQ(sizes(m), (Ints{3, 4, 2}));
  Tensor d = diagonal(x, 1);
  EXPECT_TRUE(is_view_of(d, x));
  EXPECT_TRUE(tensors_equal(d, make({1, 6, 11}, {3})));
  EXPECT_EQ(sizes(squeeze(iota({1, 3, 1}))), (Ints{3}));
  EXPECT_EQ(sizes(unflatten(x, 1, {2, -1})), (Ints{3, 2, 2}));
  EXPECT_EQ(test::error_of([&] { narrow(x, 1, 2, 3); }),
            "start (2) + length (3) exceeds dimension size (4).");
  EXPECT_EQ(test::error_of([&] {
              split(x, Ints{1, 1}, 1);
            }),
            "split_with_sizes expects split_sizes to sum exactly to 4 (input tensor's size at "
            "dimension 1), but got split_sizes=[1, 1]");
}

TEST_P(ViewOps, StackRepeatFlipRollAndTriangles) {
  Tensor a = iota({2, 3});
  EXPECT_EQ(sizes(stack({a, a}, 1)), (Ints{2, 2, 3}));
  EXPECT_TRUE(
      tensors_equal(make({1, 2}, {2}).repeat({2, 2}), make({1, 2, 1, 2, 1, 2, 1, 2}, {2, 4})));
  // A new tensor even where the expanded view would reshape as a view (as PyTorch's): repeats of
  // a size-1 dimension, all repeats 1, repeat_interleave by 1.
  const Tensor row = make({1, 2}, {1, 2});
  for (const Tensor& r : {row.repeat({2, 1}), a.repeat({1, 1}), repeat_interleave(a, 1, 1),
                          repeat_interleave(row, 3, 0)}) {
    EXPECT_FALSE(r.storage().is_same(row.storage()) || r.storage().is_same(a.storage()));
    EXPECT_TRUE(r.is_contiguous());
  }
  EXPECT_TRUE(tensors_equal(flip(a, {0, 1}), make({5, 4, 3, 2, 1, 0}, {2, 3})));
  EXPECT_TRUE(tensors_equal(roll(a, {1}), make({5, 0, 1, 2, 3, 4}, {2, 3})));
  EXPECT_TRUE(tensors_equal(tril(a), make({0, 0, 0, 3, 4, 0}, {2, 3})));
  EXPECT_TRUE(tensors_equal(triu(a, 1), make({0, 1, 2, 0, 0, 5}, {2, 3})));
  EXPECT_EQ(test::error_of([&] {
              flip(a, {0, 0});
            }),
            "dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(test::error_of([&] {
              stack({a, iota({3})});
            }),
            "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3] at "
            "entry 1");
}

TEST_P(ViewOps, IndexGathersAndIndexPutScatters) {
  if (GetParam().type != DeviceType::CPU) GTEST_SKIP() << "index kernels are CPU and Meta";
  Tensor x = iota({3, 4});
  Tensor idx = test::tensor({2, 0}, {2}, kLong, GetParam());
  EXPECT_TRUE(tensors_equal(index(x, {idx}), make({8, 9, 10, 11, 0, 1, 2, 3}, {2, 4})));
  EXPECT_TRUE(tensors_equal(index(x, {std::nullopt, idx}), make({2, 0, 6, 4, 10, 8}, {3, 2})));
  Tensor mask = test::tensor({1, 0, 1}, {3}, kBool, GetParam());
  EXPECT_EQ(sizes(index(x, {mask})), (Ints{2, 4}));
  Tensor y = iota({4});
  Tensor dup = test::tensor({1, 1, 3}, {3}, kLong, GetParam());
  index_put_(y, {dup}, make({1, 2, 3}, {3}), /*accumulate=*/true);
  EXPECT_TRUE(tensors_equal(y, make({0, 4, 2, 6}, {4})));
  EXPECT_TRUE(tensors_equal(nonzero(make({0, 1, 0, 2}, {2, 2})),
                            test::tensor({0, 1, 1, 1}, {2, 2}, kLong, GetParam())));
  Tensor out_of_range = test::tensor({5}, {1}, kLong, GetParam());
  EXPECT_EQ(test::error_of([&] { index(x, {out_of_range}); }),
            "index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(test::error_of([&] { index(iota({4}), {mask}); }),
            "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
            "[4] at index 0");
}

INSTANTIATE_TEST_SUITE_P(Devices, ViewOps, ::testing::ValuesIn(test::op_test_devices()),
                         [](const auto& info) {
                           return std::string(device_type_name(info.param.type));
                         });

}  // namespace
}  // namespace opd
