// opd::AliasAnalysisKind (opd/alias_analysis.h): PyTorch's names and fixed values.

#include "opd/alias_analysis.h"

#include <gtest/gtest.h>

namespace opd {
namespace {

TEST(AliasAnalysisKind, NamesAreTorchsAndRoundTrip) {
  EXPECT_EQ(to_string(AliasAnalysisKind::CONSERVATIVE), "CONSERVATIVE");
  EXPECT_EQ(to_string(AliasAnalysisKind::FROM_SCHEMA), "FROM_SCHEMA");
  EXPECT_EQ(to_string(AliasAnalysisKind::PURE_FUNCTION), "PURE_FUNCTION");
  for (size_t i = 0; i < kAliasAnalysisKindNames.size(); ++i) {
    auto k = static_cast<AliasAnalysisKind>(i);
    EXPECT_EQ(alias_analysis_kind_from_name(to_string(k)), k) << kAliasAnalysisKindNames[i];
  }
  EXPECT_EQ(alias_analysis_kind_from_name("from_schema"), std::nullopt);
  EXPECT_EQ(alias_analysis_kind_from_name(""), std::nullopt);
  EXPECT_EQ(alias_analysis_kind_from_name("INTERNAL_SPECIAL_CASE"), std::nullopt);
  // A kind a newer core appended, seen by code built against this header.
  EXPECT_EQ(to_string(static_cast<AliasAnalysisKind>(3)), "UNKNOWN");
  EXPECT_EQ(to_string(static_cast<AliasAnalysisKind>(255)), "UNKNOWN");
  static_assert(alias_analysis_kind_from_name("PURE_FUNCTION") == AliasAnalysisKind::PURE_FUNCTION,
                "usable at compile time");
}

// The values cross the plugin boundary: appending keeps them, reordering would not.
TEST(AliasAnalysisKind, ValuesAreFixed) {
  EXPECT_EQ(static_cast<int>(AliasAnalysisKind::CONSERVATIVE), 0);
  EXPECT_EQ(static_cast<int>(AliasAnalysisKind::FROM_SCHEMA), 1);
  EXPECT_EQ(static_cast<int>(AliasAnalysisKind::PURE_FUNCTION), 2);
  EXPECT_EQ(sizeof(AliasAnalysisKind), 1u);
}

}  // namespace
}  // namespace opd
