// Schema inference from C++ kernel signatures (opd::infer_schema_string, boxing.h) and the
// comparison of an inferred schema with a declared one (find_schema_differences,
// check_inferred_schema in core/src/schema/infer_schema.h).

#include "schema/infer_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <complex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "opd/boxing.h"
#include "opd/error.h"
#include "opd/function_schema.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using ::testing::HasSubstr;

// ---- infer_schema_string: argument types ------------------------------------------------------

TEST(InferSchema, TensorArgumentsByValueAndReferenceAreTensor) {
  EXPECT_EQ(infer_schema_string<Tensor(Tensor)>(), "(Tensor _0) -> Tensor _0");
  EXPECT_EQ(infer_schema_string<Tensor(const Tensor&)>(), "(Tensor _0) -> Tensor _0");
  EXPECT_EQ(infer_schema_string<Tensor&(Tensor&, const Tensor&)>(),
            "(Tensor _0, Tensor _1) -> Tensor _0");
}

TEST(InferSchema, NumbersAndBool) {
  EXPECT_EQ(infer_schema_string<Tensor(const Tensor&, int64_t)>(),
            "(Tensor _0, int _1) -> Tensor _0");
  EXPECT_EQ(infer_schema_string<double(double)>(), "(float _0) -> float _0");
  EXPECT_EQ(infer_schema_string<bool(bool)>(), "(bool _0) -> bool _0");
  EXPECT_EQ(infer_schema_string<std::complex<double>(std::complex<double>)>(),
            "(complex _0) -> complex _0");
}

TEST(InferSchema, StringsAreStr) {
  EXPECT_EQ(infer_schema_string<std::string(std::string_view)>(), "(str _0) -> str _0");
  EXPECT_EQ(infer_schema_string<void(const std::string&)>(), "(str _0) -> ()");
}

TEST(InferSchema, ScalarAndEnumTypes) {
  EXPECT_EQ(infer_schema_string<Scalar(const Scalar&)>(), "(Scalar _0) -> Scalar _0");
  EXPECT_EQ(infer_schema_string<ScalarType(ScalarType)>(), "(ScalarType _0) -> ScalarType _0");
  EXPECT_EQ(infer_schema_string<Layout(Layout)>(), "(Layout _0) -> Layout _0");
  EXPECT_EQ(infer_schema_string<MemoryFormat(MemoryFormat)>(),
            "(MemoryFormat _0) -> MemoryFormat _0");
  EXPECT_EQ(infer_schema_string<Device(Device)>(), "(Device _0) -> Device _0");
}

TEST(InferSchema, ListsAndTheirViews) {
  EXPECT_EQ(infer_schema_string<void(IntArrayRef)>(), "(int[] _0) -> ()");
  EXPECT_EQ(infer_schema_string<std::vector<int64_t>(const std::vector<int64_t>&)>(),
            "(int[] _0) -> int[] _0");
  EXPECT_EQ(infer_schema_string<void(std::span<const double>)>(), "(float[] _0) -> ()");
  EXPECT_EQ(infer_schema_string<std::vector<double>(std::vector<double>)>(),
            "(float[] _0) -> float[] _0");
  EXPECT_EQ(infer_schema_string<std::vector<bool>(const std::vector<bool>&)>(),
            "(bool[] _0) -> bool[] _0");
  EXPECT_EQ(infer_schema_string<std::vector<Tensor>(std::span<const Tensor>)>(),
            "(Tensor[] _0) -> Tensor[] _0");
  EXPECT_EQ(infer_schema_string<Tensor(const std::vector<Tensor>&)>(),
            "(Tensor[] _0) -> Tensor _0");
  EXPECT_EQ(infer_schema_string<void(const std::vector<std::optional<Tensor>>&)>(),
            "(Tensor?[] _0) -> ()");
}

TEST(InferSchema, OptionalsAppendQuestionMark) {
  EXPECT_EQ(infer_schema_string<std::optional<Tensor>(const std::optional<Tensor>&)>(),
            "(Tensor? _0) -> Tensor? _0");
  EXPECT_EQ(infer_schema_string<void(std::optional<int64_t>, std::optional<double>)>(),
            "(int? _0, float? _1) -> ()");
  EXPECT_EQ(infer_schema_string<void(std::optional<std::vector<int64_t>>)>(), "(int[]? _0) -> ()");
  EXPECT_EQ(infer_schema_string<void(std::optional<ScalarType>, std::optional<Device>)>(),
            "(ScalarType? _0, Device? _1) -> ()");
}

TEST(InferSchema, ArgumentsAreNumberedFromZero) {
  EXPECT_EQ((infer_schema_string<void(const Tensor&, int64_t, double, bool, std::string_view)>()),
            "(Tensor _0, int _1, float _2, bool _3, str _4) -> ()");
}

// ---- infer_schema_string: returns -----------------------------------------------------------

TEST(InferSchema, NoArgumentsAndVoidReturn) {
  EXPECT_EQ(infer_schema_string<void()>(), "() -> ()");
  EXPECT_EQ(infer_schema_string<Tensor()>(), "() -> Tensor _0");
}

TEST(InferSchema, TupleReturnsAreParenthesisedAndNumbered) {
  EXPECT_EQ((infer_schema_string<std::tuple<Tensor, Tensor>(const Tensor&)>()),
            "(Tensor _0) -> (Tensor _0, Tensor _1)");
  EXPECT_EQ((infer_schema_string<std::tuple<Tensor, int64_t, double>()>()),
            "() -> (Tensor _0, int _1, float _2)");
  EXPECT_EQ((infer_schema_string<std::tuple<Tensor&, Tensor&>(const Tensor&, Tensor&, Tensor&)>()),
            "(Tensor _0, Tensor _1, Tensor _2) -> (Tensor _0, Tensor _1)");
  EXPECT_EQ((infer_schema_string<std::tuple<>()>()), "() -> ()");
  // Any tuple-like result is boxed element by element (box_results), so inferred as a tuple.
  EXPECT_EQ((infer_schema_string<std::array<bool, 2>(const Tensor&)>()),
            "(Tensor _0) -> (bool _0, bool _1)");
}

TEST(InferSchema, InferredTextParsesAsAnAnonymousSchema) {
  FunctionSchema s = parse_schema(
      infer_schema_string<std::tuple<Tensor, int64_t>(
          const Tensor&, std::optional<int64_t>, const std::vector<std::optional<Tensor>>&)>());
  ASSERT_EQ(s.arguments().size(), 3u);
  EXPECT_EQ(s.arguments()[0].name(), "_0");
  EXPECT_EQ(s.arguments()[1].type()->str(), "int?");
  EXPECT_EQ(s.arguments()[2].type()->str(), "Tensor?[]");
  ASSERT_EQ(s.returns().size(), 2u);
  EXPECT_EQ(s.returns()[1].type()->str(), "int");
}

// ---- find_schema_differences --------------------------------------------------------------

std::optional<std::string> differences(std::string_view declared, std::string_view inferred) {
  return find_schema_differences(parse_schema(declared), parse_schema(inferred));
}

TEST(FindSchemaDifferences, IdenticalTypesMatchDespiteNames) {
  EXPECT_EQ(differences("test_infer::foo(Tensor self, int dim) -> Tensor out",
                        "(Tensor _0, int _1) -> Tensor _0"),
            std::nullopt);
}

TEST(FindSchemaDifferences, InferredFromCppSignatureMatches) {
  EXPECT_EQ(differences("test_infer::foo(Tensor self, int[] size, float? eps, Tensor?[] idx) -> "
                        "(Tensor a, Tensor b)",
                        infer_schema_string<std::tuple<Tensor, Tensor>(
                            const Tensor&, IntArrayRef, std::optional<double>,
                            const std::vector<std::optional<Tensor>>&)>()),
            std::nullopt);
}

TEST(FindSchemaDifferences, DefaultsAliasAnnotationsKwargOnlyAndFixedSizesAreIgnored) {
  EXPECT_EQ(differences("test_infer::foo_(Tensor(a!) self, int[2] size=1, *, float alpha=1.0) -> "
                        "Tensor(a!)",
                        "(Tensor _0, int[] _1, float _2) -> Tensor _0"),
            std::nullopt);
}

TEST(FindSchemaDifferences, SymIntMatchesInt) {
  EXPECT_EQ(differences("test_infer::foo(SymInt n) -> SymInt", "(int _0) -> int _0"), std::nullopt);
  EXPECT_EQ(differences("test_infer::foo(SymInt[] size, SymInt? n) -> Tensor",
                        "(int[] _0, int? _1) -> Tensor _0"),
            std::nullopt);
}

TEST(FindSchemaDifferences, ArgumentCount) {
  EXPECT_EQ(
      differences("test_infer::foo(Tensor x, Tensor y) -> Tensor", "(Tensor _0) -> Tensor _0"),
      "The number of arguments is different. 2 vs 1.");
  EXPECT_EQ(differences("test_infer::foo() -> Tensor", "(Tensor _0) -> Tensor _0"),
            "The number of arguments is different. 0 vs 1.");
}

TEST(FindSchemaDifferences, ReturnCount) {
  EXPECT_EQ(
      differences("test_infer::foo(Tensor x) -> Tensor", "(Tensor _0) -> (Tensor _0, Tensor _1)"),
      "The number of returns is different. 1 vs 2.");
  EXPECT_EQ(differences("test_infer::foo(Tensor x) -> Tensor", "(Tensor _0) -> ()"),
            "The number of returns is different. 1 vs 0.");
}

TEST(FindSchemaDifferences, ArgumentCountIsReportedBeforeReturnCount) {
  EXPECT_EQ(differences("test_infer::foo(Tensor x, int y) -> Tensor", "(Tensor _0) -> ()"),
            "The number of arguments is different. 2 vs 1.");
}

TEST(FindSchemaDifferences, ArgumentTypeMismatchNamesPositionFromOne) {
  EXPECT_EQ(differences("test_infer::foo(Tensor x, int y) -> Tensor",
                        "(Tensor _0, float _1) -> Tensor _0"),
            "Type mismatch in argument 2: int vs float.");
  EXPECT_EQ(differences("test_infer::foo(Tensor x) -> Tensor", "(int _0) -> Tensor _0"),
            "Type mismatch in argument 1: Tensor vs int.");
}

TEST(FindSchemaDifferences, OptionalityAndListElementTypesMatter) {
  EXPECT_EQ(differences("test_infer::foo(int? x) -> ()", "(int _0) -> ()"),
            "Type mismatch in argument 1: int? vs int.");
  EXPECT_EQ(differences("test_infer::foo(Tensor[] x) -> ()", "(Tensor?[] _0) -> ()"),
            "Type mismatch in argument 1: Tensor[] vs Tensor?[].");
  EXPECT_EQ(differences("test_infer::foo(int[] x) -> ()", "(float[] _0) -> ()"),
            "Type mismatch in argument 1: int[] vs float[].");
}

TEST(FindSchemaDifferences, ReturnTypeMismatch) {
  EXPECT_EQ(differences("test_infer::foo(Tensor x) -> Tensor", "(Tensor _0) -> int _0"),
            "Type mismatch in return 1: Tensor vs int.");
  EXPECT_EQ(differences("test_infer::foo(Tensor x) -> (Tensor, float)",
                        "(Tensor _0) -> (Tensor _0, int _1)"),
            "Type mismatch in return 2: float vs int.");
}

TEST(FindSchemaDifferences, ArgumentTypesAreReportedBeforeReturnTypes) {
  EXPECT_EQ(differences("test_infer::foo(Tensor x) -> Tensor", "(int _0) -> int _0"),
            "Type mismatch in argument 1: Tensor vs int.");
}

// ---- check_inferred_schema ----------------------------------------------------------------

TEST(CheckInferredSchema, AcceptsAMatchingSchema) {
  EXPECT_NO_THROW(check_inferred_schema(
      parse_schema("test_infer::foo(Tensor x) -> Tensor"), "registered at a.cpp:1",
      parse_schema("(Tensor _0) -> Tensor _0"), "registered at b.cpp:2"));
}

TEST(CheckInferredSchema, MismatchNamesOperatorBothSchemasBothSitesAndReason) {
  try {
    check_inferred_schema(parse_schema("test_infer::foo(Tensor x, Tensor y) -> Tensor"),
                          "registered at a.cpp:1", parse_schema("(Tensor _0) -> Tensor _0"),
                          "registered at b.cpp:2");
    FAIL() << "expected a schema mismatch";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Inferred operator schema for a C++ kernel function doesn't match the expected "
              "function schema.\n"
              "  operator: test_infer::foo\n"
              "  expected schema: test_infer::foo(Tensor x, Tensor y) -> Tensor\n"
              "    registered at a.cpp:1\n"
              "  inferred schema: (Tensor _0) -> Tensor _0\n"
              "    registered at b.cpp:2\n"
              "  reason: The number of arguments is different. 2 vs 1.");
  }
}

TEST(CheckInferredSchema, MismatchNamesTheOverload) {
  try {
    check_inferred_schema(parse_schema("test_infer::foo.out(Tensor x) -> Tensor"), "d1",
                          parse_schema("(Tensor _0) -> int _0"), "d2");
    FAIL() << "expected a schema mismatch";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("  operator: test_infer::foo.out\n"));
    EXPECT_THAT(e.msg(), HasSubstr("  reason: Type mismatch in return 1: Tensor vs int."));
  }
}

}  // namespace
}  // namespace opd
