#include "common/broadcast.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "error_text.h"
#include "opd/error.h"

namespace opd::common {
namespace {

using test_util::error_text;
using Ints = std::vector<int64_t>;

TEST(Broadcast, EqualShapesAreUnchanged) {
  EXPECT_EQ(infer_size(Ints{2, 3}, Ints{2, 3}), (Ints{2, 3}));
  EXPECT_EQ(infer_size(Ints{}, Ints{}), (Ints{}));
}

TEST(Broadcast, SizeOneStretchesAndMissingDimsCountAsOne) {
  EXPECT_EQ(infer_size(Ints{2, 1}, Ints{1, 3}), (Ints{2, 3}));
  EXPECT_EQ(infer_size(Ints{3}, Ints{2, 3}), (Ints{2, 3}));
  EXPECT_EQ(infer_size(Ints{4, 1, 5}, Ints{3, 1}), (Ints{4, 3, 5}));
  EXPECT_EQ(infer_size(Ints{}, Ints{2, 3}), (Ints{2, 3}));
  EXPECT_EQ(infer_size(Ints{2, 3}, Ints{}), (Ints{2, 3}));
}

TEST(Broadcast, SizeOneAgainstZeroGivesZero) {
  EXPECT_EQ(infer_size(Ints{1}, Ints{0}), (Ints{0}));
  EXPECT_EQ(infer_size(Ints{0, 1}, Ints{1, 4}), (Ints{0, 4}));
  EXPECT_EQ(infer_size(Ints{0}, Ints{}), (Ints{0}));
}

TEST(Broadcast, MismatchNamesSizesAndResultDimension) {
  EXPECT_EQ(error_text<Error>([] {
              infer_size(Ints{2, 3}, Ints{2, 4});
            }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 1");
  // The dimension is counted in the result: b's leading dims shift a's.
  EXPECT_EQ(error_text<Error>([] {
              infer_size(Ints{3}, Ints{5, 2, 4});
            }),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
            "dimension 2");
  EXPECT_EQ(error_text<Error>([] {
              infer_size(Ints{2, 1}, Ints{3, 1});
            }),
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
            "dimension 0");
  EXPECT_EQ(error_text<Error>([] { infer_size(Ints{0}, Ints{2}); }),
            "The size of tensor a (0) must match the size of tensor b (2) at non-singleton "
            "dimension 0");
}

TEST(Broadcast, NaryFoldsFromTheLeft) {
  const Ints a{2, 1, 1}, b{3, 1}, c{4};
  const std::vector<IntArrayRef> shapes{a, b, c};
  EXPECT_EQ(infer_size(shapes), (Ints{2, 3, 4}));
  EXPECT_EQ(infer_size(std::vector<IntArrayRef>{}), (Ints{}));
  const std::vector<IntArrayRef> one{b};
  EXPECT_EQ(infer_size(one), b);
}

TEST(Broadcast, NaryMismatchNamesTheShapeSoFarAsTensorA) {
  const Ints a{2, 1}, b{1, 3}, c{5};
  const std::vector<IntArrayRef> shapes{a, b, c};
  EXPECT_EQ(error_text<Error>([&] { infer_size(shapes); }),
            "The size of tensor a (3) must match the size of tensor b (5) at non-singleton "
            "dimension 1");
}

}  // namespace
}  // namespace opd::common
