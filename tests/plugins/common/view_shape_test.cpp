#include "common/view_shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "error_text.h"
#include "opd/error.h"

namespace opd {
namespace {

using test_util::error_text;
using Ints = std::vector<int64_t>;

StridedGeometry contiguous(const Ints& sizes, int64_t offset = 0) {
  return {sizes, contiguous_strides(sizes), offset};
}

// ---- infer_size / view --------------------------------------------------------------------------

TEST(ViewShape, InferSizeFillsTheMinusOne) {
  EXPECT_EQ(infer_size(Ints{2, -1}, 6), (Ints{2, 3}));
  EXPECT_EQ(infer_size(Ints{-1}, 0), (Ints{0}));
  EXPECT_EQ(infer_size(Ints{3, 0}, 0), (Ints{3, 0}));
  EXPECT_EQ(infer_size(Ints{}, 1), (Ints{}));
}

TEST(ViewShape, InferSizeErrors) {
  EXPECT_EQ(error_text<Error>([] {
              infer_size(Ints{2, 5}, 6);
            }),
            "shape '[2, 5]' is invalid for input of size 6");
  EXPECT_EQ(error_text<Error>([] {
              infer_size(Ints{-1, 4}, 6);
            }),
            "shape '[-1, 4]' is invalid for input of size 6");
  EXPECT_EQ(error_text<Error>([] {
              infer_size(Ints{-1, -1}, 6);
            }),
            "only one dimension can be inferred");
  EXPECT_EQ(error_text<Error>([] { infer_size(Ints{-2, 3}, 6); }), "invalid shape dimension -2");
  EXPECT_EQ(error_text<Error>([] {
              infer_size(Ints{-1, 0}, 0);
            }),
            "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified "
            "dimension size -1 can be any value and is ambiguous");
}

TEST(ViewShape, ComputeStrideMergesAndSplitsContiguousChunks) {
  // [2, 3, 4] contiguous -> [6, 4] and [2, 12] and [24]
  EXPECT_EQ(compute_stride(Ints{2, 3, 4}, Ints{12, 4, 1}, Ints{6, 4}), (Ints{4, 1}));
  EXPECT_EQ(compute_stride(Ints{2, 3, 4}, Ints{12, 4, 1}, Ints{24}), (Ints{1}));
  EXPECT_EQ(compute_stride(Ints{6}, Ints{1}, Ints{2, 1, 3}), (Ints{3, 3, 1}));
  // A transposed [3, 2] (strides [1, 3]) splits its chunks, never merges them.
  EXPECT_EQ(compute_stride(Ints{3, 2}, Ints{1, 3}, Ints{3, 1, 2}), (Ints{1, 6, 3}));
  EXPECT_EQ(compute_stride(Ints{3, 2}, Ints{1, 3}, Ints{6}), std::nullopt);
  // Inner dimension of a sliced tensor: [4, 2] with strides [4, 1] merges nothing.
  EXPECT_EQ(compute_stride(Ints{4, 2}, Ints{4, 1}, Ints{8}), std::nullopt);
  EXPECT_EQ(compute_stride(Ints{4, 2}, Ints{4, 1}, Ints{2, 2, 2}), (Ints{8, 4, 1}));
  // Expanded dimensions (stride 0) split but do not merge.
  EXPECT_EQ(compute_stride(Ints{4, 3}, Ints{0, 1}, Ints{2, 2, 3}), (Ints{0, 0, 1}));
  EXPECT_EQ(compute_stride(Ints{4, 3}, Ints{0, 1}, Ints{12}), std::nullopt);
  // 0-dim and empty tensors.
  EXPECT_EQ(compute_stride(Ints{}, Ints{}, Ints{1, 1}), (Ints{1, 1}));
  EXPECT_EQ(compute_stride(Ints{0, 3}, Ints{7, 2}, Ints{0, 3}), (Ints{7, 2}));
  EXPECT_EQ(compute_stride(Ints{0, 3}, Ints{7, 2}, Ints{3, 0}), (Ints{1, 1}));
}

TEST(ViewShape, ViewKeepsOffsetAndReportsIncompatibleStrides) {
  StridedGeometry g = view_geometry(contiguous({2, 3}, 5), Ints{3, -1});
  EXPECT_EQ(g, (StridedGeometry{{3, 2}, {2, 1}, 5}));
  StridedGeometry transposed{{3, 2}, {1, 3}, 0};
  EXPECT_EQ(error_text<Error>([&] { view_geometry(transposed, Ints{6}); }),
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  EXPECT_EQ(error_text<Error>([] {
              view_geometry(contiguous({2, 3}), Ints{2, 5});
            }),
            "shape '[2, 5]' is invalid for input of size 6");
}

// ---- expand -------------------------------------------------------------------------------------

TEST(ViewShape, ExpandAddsZeroStrides) {
  EXPECT_EQ(expand_geometry(contiguous({3}), Ints{2, 3}, "torch.FloatTensor"),
            (StridedGeometry{{2, 3}, {0, 1}, 0}));
  EXPECT_EQ(expand_geometry(contiguous({3, 1}), Ints{-1, 4}, "torch.FloatTensor"),
            (StridedGeometry{{3, 4}, {1, 0}, 0}));
  EXPECT_EQ(expand_geometry(contiguous({}), Ints{2, 2}, "torch.FloatTensor"),
            (StridedGeometry{{2, 2}, {0, 0}, 0}));
  // A new leading size-1 dimension keeps a stride that spans the rest.
  EXPECT_EQ(expand_geometry(contiguous({2, 3}), Ints{1, 2, 3}, "torch.FloatTensor"),
            (StridedGeometry{{1, 2, 3}, {6, 3, 1}, 0}));
}

TEST(ViewShape, ExpandErrors) {
  EXPECT_EQ(error_text<Error>([] {
              expand_geometry(contiguous({3}), Ints{2, 4}, "torch.FloatTensor");
            }),
            "The expanded size of the tensor (4) must match the existing size (3) at "
            "non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]");
  EXPECT_EQ(error_text<Error>([] {
              expand_geometry(contiguous({2, 3}), Ints{3}, "torch.FloatTensor");
            }),
            "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must "
            "be greater or equal to the number of dimensions in the tensor (2)");
  EXPECT_EQ(error_text<Error>([] {
              expand_geometry(contiguous({2, 3}), Ints{3}, kLong, Device(DeviceType::CPU));
            }),
            "expand(torch.LongTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must "
            "be greater or equal to the number of dimensions in the tensor (2)");
  EXPECT_EQ(error_text<Error>([] {
              expand_geometry(contiguous({3}), Ints{-1, 3}, "torch.FloatTensor");
            }),
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
            "dimension 0");
}

TEST(ViewShape, LegacyTypeName) {
  EXPECT_EQ(legacy_type_name(kFloat, Device(DeviceType::CPU)), "torch.FloatTensor");
  EXPECT_EQ(legacy_type_name(kLong, Device(DeviceType::CUDA, 0)), "torch.cuda.LongTensor");
}

// ---- permute / transpose / t --------------------------------------------------------------------

TEST(ViewShape, PermuteReordersSizesAndStrides) {
  EXPECT_EQ(permute_geometry(contiguous({2, 3, 4}), Ints{2, 0, -2}),
            (StridedGeometry{{4, 2, 3}, {1, 12, 4}, 0}));
}

TEST(ViewShape, PermuteErrors) {
  EXPECT_EQ(error_text<Error>([] {
              permute_geometry(contiguous({2, 3}), Ints{0, 1, 2});
            }),
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to "
            "len(dims) = 3");
  EXPECT_EQ(error_text<Error>([] {
              permute_geometry(contiguous({2, 3}), Ints{1, -1});
            }),
            "permute(): duplicate dims are not allowed.");
  EXPECT_EQ(error_text<IndexError>([] {
              permute_geometry(contiguous({2, 3}), Ints{0, 2});
            }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST(ViewShape, TransposeAndT) {
  EXPECT_EQ(transpose_geometry(contiguous({2, 3, 4}), 0, -1),
            (StridedGeometry{{4, 3, 2}, {1, 4, 12}, 0}));
  EXPECT_EQ(transpose_geometry(contiguous({2, 3}), 1, 1), contiguous({2, 3}));
  EXPECT_EQ(t_geometry(contiguous({2, 3})), (StridedGeometry{{3, 2}, {1, 3}, 0}));
  EXPECT_EQ(t_geometry(contiguous({5})), contiguous({5}));
  EXPECT_EQ(t_geometry(contiguous({})), contiguous({}));
  EXPECT_EQ(error_text<Error>([] {
              t_geometry(contiguous({2, 3, 4}));
            }),
            "t() expects a tensor with <= 2 dimensions, but self is 3D");
  EXPECT_EQ(error_text<IndexError>([] {
              transpose_geometry(contiguous({2, 3}), 0, 2);
            }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

// ---- squeeze / unsqueeze ------------------------------------------------------------------------

TEST(ViewShape, SqueezeDimRemovesOnlySizeOne) {
  EXPECT_EQ(squeeze_dim_geometry(contiguous({2, 1, 3}), 1), (StridedGeometry{{2, 3}, {3, 1}, 0}));
  EXPECT_EQ(squeeze_dim_geometry(contiguous({2, 1, 3}), -1), contiguous({2, 1, 3}));
  EXPECT_EQ(squeeze_dim_geometry(contiguous({}), 0), contiguous({}));
  EXPECT_EQ(error_text<IndexError>([] { squeeze_dim_geometry(contiguous({2}), 1); }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST(ViewShape, UnsqueezeInsertsASizeOneDimension) {
  EXPECT_EQ(unsqueeze_geometry(contiguous({2, 3}), 0), (StridedGeometry{{1, 2, 3}, {6, 3, 1}, 0}));
  EXPECT_EQ(unsqueeze_geometry(contiguous({2, 3}), 1), (StridedGeometry{{2, 1, 3}, {3, 3, 1}, 0}));
  EXPECT_EQ(unsqueeze_geometry(contiguous({2, 3}), -1), (StridedGeometry{{2, 3, 1}, {3, 1, 1}, 0}));
  EXPECT_EQ(unsqueeze_geometry(contiguous({}), 0), (StridedGeometry{{1}, {1}, 0}));
  EXPECT_EQ(error_text<IndexError>([] {
              unsqueeze_geometry(contiguous({2, 3}), 3);
            }),
            "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
}

// ---- slice / select -----------------------------------------------------------------------------

TEST(ViewShape, SliceClampsAsPython) {
  const StridedGeometry g = contiguous({10, 2}, 3);
  EXPECT_EQ(slice_geometry(g, 0, 2, 8, 3), (StridedGeometry{{2, 2}, {6, 1}, 7}));
  EXPECT_EQ(slice_geometry(g, 0, -3, std::nullopt, 1), (StridedGeometry{{3, 2}, {2, 1}, 17}));
  EXPECT_EQ(slice_geometry(g, 0, -100, 100, 1), g);
  EXPECT_EQ(slice_geometry(g, 0, 7, 2, 1), (StridedGeometry{{0, 2}, {2, 1}, 17}));
  EXPECT_EQ(slice_geometry(g, 0, 20, std::nullopt, 1), (StridedGeometry{{0, 2}, {2, 1}, 23}));
  EXPECT_EQ(slice_geometry(g, -1, 1, std::nullopt, 1), (StridedGeometry{{10, 1}, {2, 1}, 4}));
}

TEST(ViewShape, SliceErrors) {
  EXPECT_EQ(error_text<Error>([] { slice_geometry(contiguous({4}), 0, 0, 4, 0); }),
            "slice step must be positive");
  EXPECT_EQ(error_text<Error>([] { slice_geometry(contiguous({4}), 0, 0, 4, -1); }),
            "slice step must be positive");
  EXPECT_EQ(error_text<IndexError>([] { slice_geometry(contiguous({}), 0, 0, 1, 1); }),
            "slice() cannot be applied to a 0-dim tensor.");
}

TEST(ViewShape, SelectRemovesTheDimension) {
  EXPECT_EQ(select_geometry(contiguous({3, 4}), 0, 2), (StridedGeometry{{4}, {1}, 8}));
  EXPECT_EQ(select_geometry(contiguous({3, 4}), 1, -1), (StridedGeometry{{3}, {4}, 3}));
  EXPECT_EQ(select_geometry(contiguous({3}), 0, 0), (StridedGeometry{{}, {}, 0}));
}

TEST(ViewShape, SelectErrors) {
  EXPECT_EQ(error_text<IndexError>([] { select_geometry(contiguous({3}), 0, 5); }),
            "select(): index 5 out of range for tensor of size [3] at dimension 0");
  EXPECT_EQ(error_text<IndexError>([] {
              select_geometry(contiguous({2, 3}), -1, -4);
            }),
            "select(): index -4 out of range for tensor of size [2, 3] at dimension 1");
  EXPECT_EQ(error_text<IndexError>([] { select_geometry(contiguous({}), 0, 0); }),
            "select() cannot be applied to a 0-dim tensor.");
}

// ---- as_strided / flatten -----------------------------------------------------------------------

TEST(ViewShape, AsStridedChecks) {
  EXPECT_NO_THROW(check_as_strided(Ints{2, 2}, Ints{1, 2}, 0));
  EXPECT_EQ(error_text<Error>([] {
              check_as_strided(Ints{2, 2}, Ints{1}, 0);
            }),
            "mismatch in length of strides and shape");
  EXPECT_EQ(error_text<Error>([] {
              check_as_strided(Ints{2, 2}, Ints{-1, 1}, 0);
            }),
            "as_strided: Negative strides are not supported at the moment, got strides: [-1, 1]");
  EXPECT_EQ(error_text<Error>([] { check_as_strided(Ints{2}, Ints{1}, -1); }),
            "Tensor: invalid storage offset -1");
}

TEST(ViewShape, FlattenShape) {
  EXPECT_EQ(flatten_shape(Ints{2, 3, 4}, 0, -1), (Ints{24}));
  EXPECT_EQ(flatten_shape(Ints{2, 3, 4}, 1, 2), (Ints{2, 12}));
  EXPECT_EQ(flatten_shape(Ints{0, 1, 3, 0}, 1, 2), (Ints{0, 3, 0}));
  EXPECT_EQ(flatten_shape(Ints{}, 0, -1), (Ints{1}));
  EXPECT_EQ(error_text<Error>([] {
              flatten_shape(Ints{2, 3}, 1, 0);
            }),
            "flatten() has invalid args: start_dim cannot come after end_dim");
}

// ---- layouts ------------------------------------------------------------------------------------

TEST(ViewShape, NonOverlappingAndDense) {
  EXPECT_TRUE(is_non_overlapping_and_dense(Ints{2, 3}, Ints{3, 1}));
  EXPECT_TRUE(is_non_overlapping_and_dense(Ints{2, 3}, Ints{1, 2}));  // transposed
  EXPECT_TRUE(is_non_overlapping_and_dense(Ints{2, 1}, Ints{1, 7}));
  EXPECT_TRUE(is_non_overlapping_and_dense(Ints{}, Ints{}));
  EXPECT_FALSE(is_non_overlapping_and_dense(Ints{2, 3}, Ints{0, 1}));  // expanded
  EXPECT_FALSE(is_non_overlapping_and_dense(Ints{2, 3}, Ints{6, 1}));  // gaps
  EXPECT_FALSE(is_non_overlapping_and_dense(Ints{3}, Ints{2}));
}

TEST(ViewShape, ContiguityPerMemoryFormat) {
  const Ints nchw{2, 3, 4, 5};
  const Ints cl_strides{60, 1, 15, 3};
  EXPECT_TRUE(is_contiguous_in(nchw, contiguous_strides(nchw), MemoryFormat::Contiguous));
  EXPECT_FALSE(is_contiguous_in(nchw, contiguous_strides(nchw), MemoryFormat::ChannelsLast));
  EXPECT_TRUE(is_contiguous_in(nchw, cl_strides, MemoryFormat::ChannelsLast));
  EXPECT_FALSE(is_contiguous_in(nchw, cl_strides, MemoryFormat::Contiguous));
  EXPECT_FALSE(is_contiguous_in(Ints{2, 3}, Ints{3, 1}, MemoryFormat::ChannelsLast));
  EXPECT_TRUE(is_contiguous_in(Ints{2, 1}, Ints{1, 9}, MemoryFormat::Contiguous));
  EXPECT_TRUE(is_contiguous_in(Ints{2, 3}, Ints{3, 1}, MemoryFormat::Preserve));
  EXPECT_FALSE(is_contiguous_in(Ints{2, 3}, Ints{1, 2}, MemoryFormat::Preserve));
  EXPECT_EQ(suggest_memory_format(nchw, cl_strides), MemoryFormat::ChannelsLast);
  EXPECT_EQ(suggest_memory_format(nchw, contiguous_strides(nchw)), MemoryFormat::Contiguous);
  EXPECT_EQ(suggest_memory_format(Ints{3, 2}, Ints{1, 3}), MemoryFormat::Contiguous);
}

}  // namespace
}  // namespace opd
