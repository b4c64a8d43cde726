// The schema → C++ mapping of tools/gen/README.md.

#include "cpp_types.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "opd/error.h"

namespace {

using namespace opd::gen;

std::string params(const char* schema) {
  return param_list(cpp_params(opd::parse_schema(schema)), /*with_defaults=*/true);
}
std::string ret(const char* schema) { return cpp_return_type(opd::parse_schema(schema)); }

TEST(CppTypes, ArgumentTypes) {
  EXPECT_EQ(params("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
            "const Tensor& self, const Tensor& other, const Scalar& alpha = 1");
  EXPECT_EQ(params("aten::add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"),
            "Tensor& self, const Tensor& other");
  EXPECT_EQ(params("aten::f(Tensor? w, Tensor[] ts, int a, SymInt b, int? c, int[] d, SymInt[] e, "
                   "int[1]? f, float g, float? h, bool i, bool? j, str k, Scalar? l, "
                   "ScalarType m, ScalarType? n, Layout? o, Device p, Device? q, "
                   "MemoryFormat r, MemoryFormat? s) -> ()"),
            "const std::optional<Tensor>& w, TensorList ts, int64_t a, int64_t b, "
            "std::optional<int64_t> c, IntArrayRef d, IntArrayRef e, OptionalIntArrayRef f, "
            "double g, std::optional<double> h, bool i, std::optional<bool> j, std::string_view k, "
            "const std::optional<Scalar>& l, ScalarType m, std::optional<ScalarType> n, "
            "std::optional<Layout> o, Device p, std::optional<Device> q, MemoryFormat r, "
            "std::optional<MemoryFormat> s");
}

TEST(CppTypes, DefaultsOnlyOnTheTrailingRun) {
  EXPECT_EQ(params("aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, "
                   "int reduction=Mean, int ignore_index=-100) -> Tensor"),
            "const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = "
            "std::nullopt, int64_t reduction = 1, int64_t ignore_index = -100");
  EXPECT_EQ(params("aten::gelu(Tensor self, *, str approximate='none') -> Tensor"),
            "const Tensor& self, std::string_view approximate = \"none\"");
  EXPECT_EQ(params("aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"),
            "const Tensor& self, IntArrayRef dim = {}, bool keepdim = false");
  EXPECT_EQ(params("aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format="
                   "contiguous_format) -> Tensor(a)"),
            "const Tensor& self, MemoryFormat memory_format = MemoryFormat::Contiguous");
  EXPECT_EQ(params("aten::f(Tensor self, float eps=1e-05, float x=0.0, int[2] s=1) -> Tensor"),
            "const Tensor& self, double eps = 1e-05, double x = 0.0, IntArrayRef s = {1, 1}");
  // A default before a parameter without one cannot be C++'s.
  EXPECT_EQ(params("aten::f(Tensor self, int a=1, *, Tensor(a!) out) -> Tensor(a!)"),
            "const Tensor& self, int64_t a, Tensor& out");
}

TEST(CppTypes, Returns) {
  EXPECT_EQ(ret("aten::f(Tensor x) -> Tensor"), "Tensor");
  EXPECT_EQ(ret("aten::f(Tensor(a) x) -> Tensor(a)"), "Tensor");
  EXPECT_EQ(ret("aten::f(Tensor(a!) x) -> Tensor(a!)"), "Tensor&");
  EXPECT_EQ(ret("aten::f(Tensor x) -> (Tensor values, Tensor indices)"),
            "std::tuple<Tensor, Tensor>");
  EXPECT_EQ(ret("aten::f(Tensor x) -> Scalar"), "Scalar");
  EXPECT_EQ(ret("aten::f(Tensor x) -> ()"), "void");
  EXPECT_EQ(ret("aten::f(Tensor x) -> Tensor[]"), "std::vector<Tensor>");
}

TEST(CppTypes, OptionalGeneratorIsAConstReferenceToAnOptional) {
  // Note [Generator objects] in opd/generator.h.
  EXPECT_EQ(params("aten::uniform_(Tensor(a!) self, float from=0, float to=1, *, "
                   "Generator? generator=None) -> Tensor(a!)"),
            "Tensor& self, double from = 0.0, double to = 1.0, "
            "const std::optional<Generator>& generator = std::nullopt");
  EXPECT_EQ(params("aten::rand.generator(int[] size, *, Generator? generator) -> Tensor"),
            "IntArrayRef size, const std::optional<Generator>& generator");
}

TEST(CppTypes, UnsupportedTypesNameTheOperatorAndArgument) {
  try {
    params("aten::f(Tensor x, Stream? stream=None) -> Tensor");
    FAIL();
  } catch (const opd::Error& e) {
    EXPECT_STREQ(e.what(),
                 "aten::f: opd-gen has no C++ type for argument 'stream' of type Stream?");
  }
}

TEST(CppTypes, KeywordsAreRenamed) {
  EXPECT_EQ(cpp_name("default"), "default_");
  EXPECT_EQ(cpp_name("self"), "self");
  // Every C++ keyword, not a list of some (issue 29).
  EXPECT_EQ(cpp_name("class"), "class_");
  EXPECT_EQ(cpp_name("co_await"), "co_await_");
  EXPECT_EQ(params("aten::f(Tensor struct, int return=1) -> Tensor"),
            "const Tensor& struct_, int64_t return_ = 1");
}

// Issue 29: a str default is the YAML's text; written unescaped, a quote in it ended the C++
// literal and the rest became code in the generated header.
TEST(CppTypes, StringDefaultsAreEscapedCppLiterals) {
  EXPECT_EQ(params("aten::f(Tensor x, str s='a\\\"); system(\\\"x\\\"); //') -> Tensor"),
            "const Tensor& x, std::string_view s = \"a\\\"); system(\\\"x\\\"); //\"");
  EXPECT_EQ(params("aten::f(Tensor x, str s='a\\\\b\\nc') -> Tensor"),
            "const Tensor& x, std::string_view s = \"a\\\\b\\nc\"");
}

}  // namespace
