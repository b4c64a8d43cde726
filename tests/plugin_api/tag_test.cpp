// opd::Tag and TagSet (opd/tag.h): PyTorch's names, their order, and the set's operations.

#include "opd/tag.h"

#include <gtest/gtest.h>

#include <vector>

namespace opd {
namespace {

TEST(Tag, NamesAreTorchsAndRoundTrip) {
  EXPECT_EQ(to_string(Tag::inplace_view), "inplace_view");
  EXPECT_EQ(to_string(Tag::nondeterministic_seeded), "nondeterministic_seeded");
  EXPECT_EQ(to_string(Tag::pt2_compliant_tag), "pt2_compliant_tag");
  for (size_t i = 0; i < kTagNames.size(); ++i) {
    auto t = static_cast<Tag>(i);
    EXPECT_EQ(tag_from_name(to_string(t)), t) << kTagNames[i];
  }
  EXPECT_EQ(tag_from_name("Pointwise"), std::nullopt);
  EXPECT_EQ(tag_from_name(""), std::nullopt);
  static_assert(tag_from_name("core") == Tag::core, "usable at compile time");
}

// The values cross the plugin boundary: appending keeps them, reordering would not.
TEST(Tag, ValuesAreFixed) {
  EXPECT_EQ(static_cast<int>(Tag::core), 0);
  EXPECT_EQ(static_cast<int>(Tag::view_copy), 10);
  EXPECT_EQ(kTagNames.size(), 11u);
}

TEST(TagSet, HoldsTagsAndPrintsThemInOrder) {
  TagSet none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(to_string(none), "");
  TagSet s{Tag::pointwise, Tag::core};
  EXPECT_FALSE(s.empty());
  EXPECT_TRUE(s.has(Tag::core));
  EXPECT_TRUE(s.has(Tag::pointwise));
  EXPECT_FALSE(s.has(Tag::view_copy));
  EXPECT_EQ(to_string(s), "core, pointwise");
  EXPECT_EQ(s.list(), (std::vector<Tag>{Tag::core, Tag::pointwise}));
  EXPECT_TRUE(none.list().empty());
  s.add(Tag::view_copy);
  EXPECT_EQ(to_string(s), "core, pointwise, view_copy");
  EXPECT_EQ(TagSet::from_raw(s.raw()), s);
  EXPECT_FALSE(s == none);
}

}  // namespace
}  // namespace opd
