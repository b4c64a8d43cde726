// Types, alias annotations, default values, arguments and schemas built in code: their printing,
// equality and checks. Parsing is covered by schema_parser_test.cpp.

#include "opd/function_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_set>

namespace opd {
namespace {

using ::testing::HasSubstr;

TypePtr T(TypeKind kind) { return Type::get(kind); }

TEST(Type, BaseTypesPrintAsInSchemas) {
  EXPECT_EQ(T(TypeKind::Tensor)->str(), "Tensor");
  EXPECT_EQ(T(TypeKind::Int)->str(), "int");
  EXPECT_EQ(T(TypeKind::SymInt)->str(), "SymInt");
  EXPECT_EQ(T(TypeKind::Float)->str(), "float");
  EXPECT_EQ(T(TypeKind::Complex)->str(), "complex");
  EXPECT_EQ(T(TypeKind::Bool)->str(), "bool");
  EXPECT_EQ(T(TypeKind::Str)->str(), "str");
  EXPECT_EQ(T(TypeKind::Scalar)->str(), "Scalar");
  EXPECT_EQ(T(TypeKind::ScalarType)->str(), "ScalarType");
  EXPECT_EQ(T(TypeKind::Layout)->str(), "Layout");
  EXPECT_EQ(T(TypeKind::MemoryFormat)->str(), "MemoryFormat");
  EXPECT_EQ(T(TypeKind::Device)->str(), "Device");
  EXPECT_EQ(T(TypeKind::DeviceIndex)->str(), "DeviceIndex");
  EXPECT_EQ(T(TypeKind::Generator)->str(), "Generator");
  EXPECT_EQ(T(TypeKind::Dimname)->str(), "Dimname");
  EXPECT_EQ(T(TypeKind::Storage)->str(), "Storage");
  EXPECT_EQ(T(TypeKind::Stream)->str(), "Stream");
  EXPECT_EQ(T(TypeKind::QScheme)->str(), "QScheme");
  EXPECT_EQ(T(TypeKind::Quantizer)->str(), "Quantizer");
  EXPECT_EQ(T(TypeKind::Capsule)->str(), "Capsule");
  EXPECT_EQ(T(TypeKind::Any)->str(), "Any");
  EXPECT_EQ(T(TypeKind::AnyClassType)->str(), "AnyClassType");
  EXPECT_EQ(T(TypeKind::AnyEnumType)->str(), "AnyEnumType");
  EXPECT_EQ(T(TypeKind::None)->str(), "NoneType");
}

TEST(Type, CompositeTypesPrintAsInSchemas) {
  auto tensor = T(TypeKind::Tensor);
  EXPECT_EQ(Type::list_of(T(TypeKind::Int))->str(), "int[]");
  EXPECT_EQ(Type::optional_of(tensor)->str(), "Tensor?");
  EXPECT_EQ(Type::list_of(Type::optional_of(tensor))->str(), "Tensor?[]");
  EXPECT_EQ(Type::optional_of(Type::list_of(tensor))->str(), "Tensor[]?");
  EXPECT_EQ(Type::dict_of(T(TypeKind::Str), tensor)->str(), "Dict(str, Tensor)");
  EXPECT_EQ(Type::tuple_of({tensor, T(TypeKind::Int)})->str(), "(Tensor, int)");
  EXPECT_EQ(Type::tuple_of({})->str(), "()");
  EXPECT_EQ(Type::future_of(Type::var("t"))->str(), "Future(t)");
  EXPECT_EQ(Type::await_of(Type::var("t"))->str(), "Await(t)");
  EXPECT_EQ(Type::rref_of(Type::var("t"))->str(), "RRef(t)");
  EXPECT_EQ(Type::union_of({T(TypeKind::Int), T(TypeKind::Str)})->str(), "Union(int, str)");
  EXPECT_EQ(Type::class_type("__torch__.torch.classes.ns.Cls")->str(),
            "__torch__.torch.classes.ns.Cls");
  EXPECT_EQ(Type::list_of(Type::tuple_of({T(TypeKind::Str), Type::var("tVal")}))->str(),
            "(str, tVal)[]");
}

TEST(Type, ExposesKindContainedTypesAndName) {
  auto dict = Type::dict_of(T(TypeKind::Str), Type::var("t"));
  EXPECT_EQ(dict->kind(), TypeKind::Dict);
  ASSERT_EQ(dict->contained().size(), 2u);
  EXPECT_EQ(dict->contained()[0]->kind(), TypeKind::Str);
  EXPECT_EQ(dict->contained()[1]->kind(), TypeKind::Var);
  EXPECT_EQ(dict->contained()[1]->name(), "t");
  EXPECT_TRUE(T(TypeKind::Tensor)->name().empty());
  EXPECT_TRUE(T(TypeKind::Tensor)->contained().empty());
}

TEST(Type, EqualityIsStructural) {
  auto a = Type::list_of(Type::optional_of(T(TypeKind::Tensor)));
  auto b = Type::list_of(Type::optional_of(T(TypeKind::Tensor)));
  EXPECT_NE(a, b);  // different objects
  EXPECT_EQ(*a, *b);
  EXPECT_FALSE(*Type::list_of(T(TypeKind::Int)) == *Type::list_of(T(TypeKind::SymInt)));
  EXPECT_FALSE(*Type::var("t") == *Type::var("t1"));
  EXPECT_FALSE(*Type::tuple_of({T(TypeKind::Int)}) == *Type::union_of({T(TypeKind::Int)}));
}

TEST(Type, BaseTypesAreSharedInstances) {
  EXPECT_EQ(Type::get(TypeKind::Tensor), Type::get(TypeKind::Tensor));
}

TEST(Type, DepthCountsNestingLevels) {
  EXPECT_EQ(T(TypeKind::Int)->depth(), 1);
  EXPECT_EQ(Type::list_of(T(TypeKind::Int))->depth(), 2);
  EXPECT_EQ(
      Type::dict_of(T(TypeKind::Str), Type::list_of(Type::optional_of(T(TypeKind::Int))))->depth(),
      4);
}

TEST(Type, FactoriesRejectMisuse) {
  EXPECT_THROW(Type::get(TypeKind::List), Error);
  EXPECT_THROW(Type::list_of(nullptr), Error);
  EXPECT_THROW(Type::union_of({}), Error);
  EXPECT_THROW(Type::var(""), Error);
}

TEST(Type, StreamsItsText) {
  std::ostringstream out;
  out << *Type::optional_of(Type::list_of(T(TypeKind::SymInt)));
  EXPECT_EQ(out.str(), "SymInt[]?");
}

TEST(AliasInfo, PrintsLikePyTorch) {
  EXPECT_EQ((AliasInfo{{"a"}, {"a"}, false, {}}).to_string(), "(a)");
  EXPECT_EQ((AliasInfo{{"a"}, {"a"}, true, {}}).to_string(), "(a!)");
  EXPECT_EQ((AliasInfo{{"a", "b"}, {"a", "b"}, false, {}}).to_string(), "(a|b)");
  EXPECT_EQ((AliasInfo{{"a"}, {"*"}, false, {}}).to_string(), "(a -> *)");
  EXPECT_EQ((AliasInfo{{"a"}, {"a", "b"}, true, {}}).to_string(), "(a! -> a|b)");
  EXPECT_EQ((AliasInfo{{"*"}, {"*"}, false, {}}).to_string(), "(*)");
}

TEST(AliasInfo, AfterSetsEqualToBeforeSetsInAnotherOrderAreNotShown) {
  EXPECT_EQ((AliasInfo{{"a", "b"}, {"b", "a"}, false, {}}).to_string(), "(a|b)");
}

TEST(AliasInfo, ComparesSetsIgnoringOrder) {
  EXPECT_EQ((AliasInfo{{"a", "b"}, {"a", "b"}, false, {}}),
            (AliasInfo{{"b", "a"}, {"b", "a"}, false, {}}));
  EXPECT_FALSE((AliasInfo{{"a"}, {"a"}, false, {}}) == (AliasInfo{{"a"}, {"a"}, true, {}}));
  AliasInfo element{{"a"}, {"a"}, true, {}};
  EXPECT_FALSE((AliasInfo{{}, {}, true, {element}}) == (AliasInfo{{}, {}, true, {}}));
}

TEST(AliasInfo, DetectsWildcards) {
  AliasInfo split{{"a"}, {"*"}, false, {}};
  EXPECT_FALSE(split.is_wildcard_before());
  EXPECT_TRUE(split.is_wildcard_after());
}

TEST(DefaultValue, PrintsScalarsLikePyTorchIValues) {
  EXPECT_EQ(DefaultValue().to_string(), "None");
  EXPECT_EQ(DefaultValue::from_bool(true).to_string(), "True");
  EXPECT_EQ(DefaultValue::from_bool(false).to_string(), "False");
  EXPECT_EQ(DefaultValue::from_int(-100).to_string(), "-100");
  EXPECT_EQ(DefaultValue::identifier("Mean").to_string(), "Mean");
}

TEST(DefaultValue, PrintsFloatsWithSeventeenDigitsOrATrailingDot) {
  EXPECT_EQ(DefaultValue::from_float(1.0).to_string(), "1.");
  EXPECT_EQ(DefaultValue::from_float(0.0).to_string(), "0.");
  EXPECT_EQ(DefaultValue::from_float(-0.0).to_string(), "-0.");
  EXPECT_EQ(DefaultValue::from_float(-2.0).to_string(), "-2.");
  EXPECT_EQ(DefaultValue::from_float(0.5).to_string(), "0.5");
  EXPECT_EQ(DefaultValue::from_float(0.01).to_string(), "0.01");
  EXPECT_EQ(DefaultValue::from_float(1e-05).to_string(), "1.0000000000000001e-05");
  EXPECT_EQ(DefaultValue::from_float(1e-06).to_string(), "9.9999999999999995e-07");
  EXPECT_EQ(DefaultValue::from_float(0.1).to_string(), "0.10000000000000001");
  EXPECT_EQ(DefaultValue::from_float(1.0 / 3).to_string(), "0.33333333333333331");
  EXPECT_EQ(DefaultValue::from_float(1e20).to_string(), "1e+20");
}

TEST(DefaultValue, PrintsNonFiniteFloatsAsInfAndNan) {
  EXPECT_EQ(DefaultValue::from_float(std::numeric_limits<double>::infinity()).to_string(), "inf");
  EXPECT_EQ(DefaultValue::from_float(-std::numeric_limits<double>::infinity()).to_string(), "-inf");
  EXPECT_EQ(DefaultValue::from_float(std::numeric_limits<double>::quiet_NaN()).to_string(), "nan");
}

TEST(DefaultValue, KeepsLargeIntegralFloatsDistinctFromInts) {
  EXPECT_EQ(DefaultValue::from_float(1e10).to_string(), "10000000000.");
}

TEST(DefaultValue, PrintsComplexAsRealSignImaginary) {
  EXPECT_EQ(DefaultValue::from_complex({0, 1}).to_string(), "0.+1.j");
  EXPECT_EQ(DefaultValue::from_complex({1.5, -2}).to_string(), "1.5-2.j");
}

TEST(DefaultValue, QuotesStringsWithCEscapes) {
  EXPECT_EQ(DefaultValue::from_string("none").to_string(), "\"none\"");
  EXPECT_EQ(DefaultValue::from_string("it's \"x\"\\\n\t").to_string(),
            "\"it\\'s \\\"x\\\"\\\\\\n\\t\"");
  EXPECT_EQ(DefaultValue::from_string(std::string("\x01\xff", 2)).to_string(), "\"\\001\\377\"");
}

TEST(DefaultValue, PrintsLists) {
  EXPECT_EQ(DefaultValue::list({}).to_string(), "[]");
  EXPECT_EQ(
      DefaultValue::list({DefaultValue::from_int(-2), DefaultValue::from_int(-1)}).to_string(),
      "[-2, -1]");
  EXPECT_EQ(
      DefaultValue::list({DefaultValue::from_float(1), DefaultValue::from_float(0.5)}).to_string(),
      "[1., 0.5]");
  EXPECT_EQ(DefaultValue::list({DefaultValue::from_bool(true), DefaultValue::from_bool(false)})
                .to_string(),
            "[True, False]");
}

TEST(DefaultValue, AccessorsReturnTheValueOrThrowForAnotherKind) {
  EXPECT_EQ(DefaultValue::from_int(3).as_int(), 3);
  EXPECT_EQ(DefaultValue::from_float(0.5).as_float(), 0.5);
  EXPECT_EQ(DefaultValue::from_complex({1, 2}).as_complex(), std::complex<double>(1, 2));
  EXPECT_EQ(DefaultValue::from_string("a").as_string(), "a");
  EXPECT_EQ(DefaultValue::identifier("strided").as_string(), "strided");
  EXPECT_TRUE(DefaultValue::from_bool(true).as_bool());
  EXPECT_EQ(DefaultValue::list({DefaultValue::from_int(1)}).as_list().size(), 1u);
  EXPECT_TRUE(DefaultValue::none().is_none());
  EXPECT_THROW((void)DefaultValue::from_int(3).as_float(), Error);
  EXPECT_THROW((void)DefaultValue::none().as_list(), Error);
}

TEST(DefaultValue, RejectsNestedListsAndNoneElements) {
  EXPECT_THROW(DefaultValue::list({DefaultValue::list({})}), Error);
  EXPECT_THROW(DefaultValue::list({DefaultValue::none()}), Error);
}

TEST(DefaultValue, EqualityDistinguishesKindsAndTreatsNanAsEqual) {
  EXPECT_FALSE(DefaultValue::from_int(1) == DefaultValue::from_float(1));
  EXPECT_FALSE(DefaultValue::from_string("a") == DefaultValue::identifier("a"));
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(DefaultValue::from_float(nan), DefaultValue::from_float(nan));
  EXPECT_EQ(DefaultValue::list({DefaultValue::from_int(1)}),
            DefaultValue::list({DefaultValue::from_int(1)}));
}

TEST(Argument, PrintsTypeAliasNameAndDefault) {
  Argument out("out", T(TypeKind::Tensor), std::nullopt, std::nullopt, true,
               AliasInfo{{"a"}, {"a"}, true, {}});
  EXPECT_EQ(out.to_string(), "Tensor(a!) out");
  EXPECT_TRUE(out.is_write());
  EXPECT_TRUE(out.is_out());
  Argument mode("mode", Type::optional_of(T(TypeKind::Str)), std::nullopt, DefaultValue::none());
  EXPECT_EQ(mode.to_string(), "str? mode=None");
  EXPECT_EQ(mode.alias_info(), nullptr);
  EXPECT_FALSE(mode.is_write());
}

TEST(Argument, PutsTheQuestionMarkAfterTheAlias) {
  Argument arg("x", Type::optional_of(T(TypeKind::Tensor)), std::nullopt, std::nullopt, false,
               AliasInfo{{"a"}, {"a"}, true, {}});
  EXPECT_EQ(arg.to_string(), "Tensor(a!)? x");
}

TEST(Argument, PrintsElementAliasesInsideLists) {
  AliasInfo container{{}, {}, true, {AliasInfo{{"a"}, {"a"}, true, {}}}};
  Argument arg("self", Type::list_of(T(TypeKind::Tensor)), std::nullopt, std::nullopt, false,
               container);
  EXPECT_EQ(arg.to_string(), "Tensor(a!)[] self");
  EXPECT_TRUE(arg.is_write());
}

TEST(Argument, PrintsListSizeBeforeTheListAlias) {
  Argument arg("x", Type::optional_of(Type::list_of(T(TypeKind::Int))), 2, std::nullopt, false,
               AliasInfo{{"a"}, {"a"}, false, {}});
  EXPECT_EQ(arg.to_string(), "int[2](a)? x");
}

TEST(Argument, CollapsesAListOfNEqualIntsToOneValue) {
  auto ints = Type::list_of(T(TypeKind::Int));
  auto ones = DefaultValue::list({DefaultValue::from_int(1), DefaultValue::from_int(1)});
  EXPECT_EQ(Argument("stride", ints, 2, ones).to_string(), "int[2] stride=1");
  EXPECT_EQ(Argument("stride", ints, 2, ones).default_value_text(), "1");
  // Without N, or with another N, "x=1" would not read back as the same list.
  EXPECT_EQ(Argument("stride", ints, std::nullopt, ones).to_string(), "int[] stride=[1, 1]");
  EXPECT_EQ(Argument("stride", ints, 3, ones).to_string(), "int[3] stride=[1, 1]");
  // PyTorch collapses int lists only, not SymInt lists.
  EXPECT_EQ(Argument("stride", Type::list_of(T(TypeKind::SymInt)), 2, ones).to_string(),
            "SymInt[2] stride=[1, 1]");
  auto mixed = DefaultValue::list({DefaultValue::from_int(-2), DefaultValue::from_int(-1)});
  EXPECT_EQ(Argument("dim", ints, 2, mixed).to_string(), "int[2] dim=[-2, -1]");
}

TEST(Argument, RejectsANullTypeAndASizeOnANonList) {
  EXPECT_THROW(Argument("x", nullptr), Error);
  EXPECT_THROW(Argument("x", T(TypeKind::Int), 2), Error);
  EXPECT_THROW(Argument("x", Type::list_of(T(TypeKind::Int)), -1), Error);
  EXPECT_NO_THROW(Argument("x", Type::optional_of(Type::list_of(T(TypeKind::Int))), 2));
}

TEST(Argument, EqualityComparesEveryField) {
  Argument a("x", T(TypeKind::Int), std::nullopt, DefaultValue::from_int(1));
  EXPECT_EQ(a, Argument("x", T(TypeKind::Int), std::nullopt, DefaultValue::from_int(1)));
  EXPECT_FALSE(a == Argument("y", T(TypeKind::Int), std::nullopt, DefaultValue::from_int(1)));
  EXPECT_FALSE(a == Argument("x", T(TypeKind::SymInt), std::nullopt, DefaultValue::from_int(1)));
  EXPECT_FALSE(a == Argument("x", T(TypeKind::Int), std::nullopt, DefaultValue::from_int(2)));
  EXPECT_FALSE(a == Argument("x", T(TypeKind::Int), std::nullopt, DefaultValue::from_int(1), true));
}

FunctionSchema add_out() {
  auto tensor = T(TypeKind::Tensor);
  AliasInfo a{{"a"}, {"a"}, true, {}};
  return FunctionSchema(
      {"aten::add", "out"},
      {Argument("self", tensor), Argument("other", tensor),
       Argument("alpha", T(TypeKind::Scalar), std::nullopt, DefaultValue::from_int(1), true),
       Argument("out", tensor, std::nullopt, std::nullopt, true, a)},
      {Argument("", tensor, std::nullopt, std::nullopt, false, a)});
}

TEST(FunctionSchema, PrintsKeywordOnlyMarkerBeforeTheFirstKeywordOnlyArgument) {
  EXPECT_EQ(add_out().to_string(),
            "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
            "Tensor(a!)");
}

TEST(FunctionSchema, ExposesNameArgumentsAndReturns) {
  FunctionSchema s = add_out();
  EXPECT_EQ(s.name(), "aten::add");
  EXPECT_EQ(s.overload_name(), "out");
  EXPECT_EQ(s.operator_name(), (OperatorName{"aten::add", "out"}));
  EXPECT_EQ(s.arguments().size(), 4u);
  EXPECT_EQ(s.returns().size(), 1u);
  EXPECT_FALSE(s.is_vararg());
  EXPECT_FALSE(s.is_varret());
  EXPECT_TRUE(s.is_mutable());
  EXPECT_EQ(s.argument_index("alpha"), 2u);
  EXPECT_EQ(s.argument_index("beta"), std::nullopt);
}

TEST(FunctionSchema, PrintsZeroReturnsAsEmptyParentheses) {
  FunctionSchema s({"aten::_print", ""}, {Argument("s", T(TypeKind::Str))}, {});
  EXPECT_EQ(s.to_string(), "aten::_print(str s) -> ()");
}

TEST(FunctionSchema, PrintsSeveralReturnsInParenthesesWithNames) {
  auto tensor = T(TypeKind::Tensor);
  FunctionSchema s({"aten::max", "dim"}, {Argument("self", tensor)},
                   {Argument("values", tensor), Argument("indices", tensor)});
  EXPECT_EQ(s.to_string(), "aten::max.dim(Tensor self) -> (Tensor values, Tensor indices)");
}

TEST(FunctionSchema, KeepsParenthesesAroundASingleTupleReturn) {
  auto tuple = Type::tuple_of({T(TypeKind::Str), Type::var("t")});
  FunctionSchema items({"aten::items", "str"}, {}, {Argument("", Type::list_of(tuple))});
  EXPECT_EQ(items.to_string(), "aten::items.str() -> ((str, t)[])");
  FunctionSchema popitem({"aten::popitem", "str"}, {}, {Argument("", tuple)});
  EXPECT_EQ(popitem.to_string(), "aten::popitem.str() -> ((str, t))");
}

TEST(FunctionSchema, PrintsVarargsAndVarrets) {
  EXPECT_EQ(FunctionSchema({"prim::Print", ""}, {}, {}, true).to_string(),
            "prim::Print(...) -> ()");
  EXPECT_EQ(FunctionSchema({"aten::format", ""}, {Argument("self", T(TypeKind::Str))},
                           {Argument("", T(TypeKind::Str))}, true)
                .to_string(),
            "aten::format(str self, ...) -> str");
  EXPECT_EQ(FunctionSchema({"prim::TupleUnpack", ""}, {Argument("tup", T(TypeKind::Any))}, {},
                           false, true)
                .to_string(),
            "prim::TupleUnpack(Any tup) -> ...");
  EXPECT_EQ(FunctionSchema({"test::f", ""}, {}, {Argument("", T(TypeKind::Tensor))}, false, true)
                .to_string(),
            "test::f() -> (Tensor, ...)");
}

TEST(FunctionSchema, AnonymousSchemaPrintsWithoutAName) {
  FunctionSchema s({}, {Argument("_0", T(TypeKind::Tensor)), Argument("_1", T(TypeKind::Int))},
                   {Argument("_0", T(TypeKind::Tensor))});
  EXPECT_EQ(s.to_string(), "(Tensor _0, int _1) -> Tensor _0");
}

TEST(FunctionSchema, WithNameKeepsEverythingElse) {
  FunctionSchema renamed = add_out().with_name({"myops::add", "out"});
  EXPECT_EQ(renamed.to_string(),
            "myops::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
            "Tensor(a!)");
  EXPECT_EQ(renamed.arguments(), add_out().arguments());
}

TEST(FunctionSchema, EqualityComparesNameArgumentsReturnsAndVarFlags) {
  EXPECT_EQ(add_out(), add_out());
  EXPECT_FALSE(add_out() == add_out().with_name({"aten::add", "Tensor"}));
  FunctionSchema a({"f", ""}, {}, {});
  EXPECT_FALSE(a == FunctionSchema({"f", ""}, {}, {}, true));
  EXPECT_FALSE(a == FunctionSchema({"f", ""}, {}, {}, false, true));
}

TEST(FunctionSchema, StreamsItsCanonicalText) {
  std::ostringstream out;
  out << add_out();
  EXPECT_EQ(out.str(), add_out().to_string());
}

TEST(FunctionSchema, RejectsPositionalArgumentsAfterKeywordOnlyOnes) {
  auto tensor = T(TypeKind::Tensor);
  try {
    FunctionSchema({"test::f", ""},
                   {Argument("a", tensor, std::nullopt, std::nullopt, true), Argument("b", tensor)},
                   {});
    FAIL() << "expected opd::Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("test::f: positional argument 'b' follows keyword-only"));
  }
}

TEST(FunctionSchema, RejectsAPositionalArgumentWithoutDefaultAfterOneWithDefault) {
  auto i = T(TypeKind::Int);
  EXPECT_THROW(
      FunctionSchema({"test::f", ""},
                     {Argument("a", i, std::nullopt, DefaultValue::from_int(1)), Argument("b", i)},
                     {}),
      Error);
  // PyTorch exempts lists, which old schemas wrote without defaults.
  EXPECT_NO_THROW(FunctionSchema(
      {"test::f", ""},
      {Argument("a", i, std::nullopt, DefaultValue::from_int(1)), Argument("b", Type::list_of(i))},
      {}));
}

TEST(FunctionSchema, RejectsDefaultsInAVarargSchema) {
  auto i = T(TypeKind::Int);
  EXPECT_THROW(
      FunctionSchema({"test::f", ""}, {Argument("a", i, std::nullopt, DefaultValue::from_int(1))},
                     {}, true),
      Error);
}

TEST(FunctionSchema, RejectsReturnsWithDefaultsOrKeywordOnly) {
  auto i = T(TypeKind::Int);
  EXPECT_THROW(FunctionSchema({"test::f", ""}, {},
                              {Argument("r", i, std::nullopt, DefaultValue::from_int(1))}),
               Error);
  EXPECT_THROW(
      FunctionSchema({"test::f", ""}, {}, {Argument("r", i, std::nullopt, std::nullopt, true)}),
      Error);
}

TEST(FunctionSchema, RejectsAnOverloadNameWithoutAName) {
  EXPECT_THROW(FunctionSchema({"", "out"}, {}, {}), Error);
}

TEST(OperatorName, PrintsOverloadAfterADot) {
  EXPECT_EQ((OperatorName{"aten::add", "Tensor"}).to_string(), "aten::add.Tensor");
  EXPECT_EQ((OperatorName{"aten::add", ""}).to_string(), "aten::add");
  std::ostringstream out;
  out << OperatorName{"aten::add", "out"};
  EXPECT_EQ(out.str(), "aten::add.out");
}

TEST(OperatorName, HashesAndComparesByNameAndOverload) {
  std::unordered_set<OperatorName> names{{"aten::add", "Tensor"}, {"aten::add", ""}};
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(names.count({"aten::add", "Tensor"}), 1u);
  EXPECT_EQ(names.count({"aten::add.Tensor", ""}), 0u);
  EXPECT_FALSE((OperatorName{"a", "bc"}) == (OperatorName{"ab", "c"}));
}

TEST(SchemaToJson, ListsArgumentsWithTypeDefaultAndAlias) {
  EXPECT_EQ(schema_to_json(add_out()), R"({
  "name": "aten::add",
  "overload": "out",
  "arguments": [
    {
      "name": "self",
      "type": "Tensor",
      "kwarg_only": false
    },
    {
      "name": "other",
      "type": "Tensor",
      "kwarg_only": false
    },
    {
      "name": "alpha",
      "type": "Scalar",
      "default": "1",
      "kwarg_only": true
    },
    {
      "name": "out",
      "type": "Tensor",
      "kwarg_only": true,
      "alias": {
        "before_set": [
          "a"
        ],
        "after_set": [
          "a"
        ],
        "is_write": true
      }
    }
  ],
  "returns": [
    {
      "name": "",
      "type": "Tensor",
      "kwarg_only": false,
      "alias": {
        "before_set": [
          "a"
        ],
        "after_set": [
          "a"
        ],
        "is_write": true
      }
    }
  ],
  "is_vararg": false,
  "is_varret": false
})");
}

TEST(SchemaToJson, ShowsListSizeDefaultAsPrintedAndContainedAliases) {
  AliasInfo container{{}, {}, true, {AliasInfo{{"a"}, {"a"}, true, {}}}};
  FunctionSchema s(
      {"test::f", ""},
      {Argument("stride", Type::list_of(T(TypeKind::Int)), 2,
                DefaultValue::list({DefaultValue::from_int(1), DefaultValue::from_int(1)})),
       Argument("out", Type::list_of(T(TypeKind::Tensor)), std::nullopt, std::nullopt, true,
                container)},
      {}, false, true);
  EXPECT_EQ(schema_to_json(s), R"({
  "name": "test::f",
  "overload": "",
  "arguments": [
    {
      "name": "stride",
      "type": "int[]",
      "N": 2,
      "default": "1",
      "kwarg_only": false
    },
    {
      "name": "out",
      "type": "Tensor[]",
      "kwarg_only": true,
      "alias": {
        "before_set": [],
        "after_set": [],
        "is_write": true,
        "contained": [
          {
            "before_set": [
              "a"
            ],
            "after_set": [
              "a"
            ],
            "is_write": true
          }
        ]
      }
    }
  ],
  "returns": [],
  "is_vararg": false,
  "is_varret": true
})");
}

TEST(SchemaToJson, QuotesStringDefaultsAsPrinted) {
  FunctionSchema s({"aten::gelu", ""},
                   {Argument("approximate", T(TypeKind::Str), std::nullopt,
                             DefaultValue::from_string("none"), true)},
                   {});
  EXPECT_THAT(schema_to_json(s), HasSubstr(R"("default": "\"none\"")"));
}

}  // namespace
}  // namespace opd
