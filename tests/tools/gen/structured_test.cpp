// Structured kernels (tools/gen/structured.cpp, emit_native.cpp): the groups of our YAML, the
// kernels opd-gen writes around a meta function and an impl, and the errors on entries that
// cannot be structured, naming the file and line.

#include "structured.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emit.h"
#include "opd/error.h"
#include "temp_yaml.h"

namespace {

using opd::gen::load_native_functions;
using opd::gen::LoadReport;
using opd::gen::NativeFunction;
using opd::gen::structured_groups;
using opd::gen::test::load_error;
using opd::gen::test::load_strict;
using opd::gen::test::OutputDir;
using opd::gen::test::TempYaml;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kOut =
    "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n"
    "  structured: True\n"
    "  dispatch:\n"
    "    CPU, CUDA: add_out\n";
constexpr const char* kFunctional =
    "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    "  structured_delegate: add.out\n";
constexpr const char* kInPlace =
    "- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)\n"
    "  structured_delegate: add.out\n";

TEST(Structured, OurGroups) {
  LoadReport report;
  auto fs = load_native_functions(OPD_NATIVE_FUNCTIONS_YAML, /*strict=*/true, &report);
  auto groups = structured_groups(fs, "native_functions.yaml");
  std::vector<std::string> metas;
  for (const auto& g : groups) {
    metas.push_back(g.meta_name);
    EXPECT_TRUE(g.out->structured);
    EXPECT_EQ(g.delegates.size(), 2u) << g.meta_name;  // functional and in-place
    for (const auto* d : g.delegates) {
      EXPECT_EQ(d->structured_delegate, g.meta_name + ".out");
    }
  }
  EXPECT_EQ(metas, (std::vector<std::string>{"add", "sub", "mul", "div"}));
}

TEST(Structured, MetaNamesFollowTheOverload) {
  TempYaml f(
      "- func: pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> "
      "Tensor(a!)\n"
      "  structured: True\n"
      "  dispatch:\n"
      "    CPU: pow_Tensor_Scalar_out\n"
      "- func: pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor\n"
      "  structured_delegate: pow.Tensor_Scalar_out\n");
  auto fs = load_strict(f);
  auto groups = structured_groups(fs, f.path());
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].meta_name, "pow_Tensor_Scalar");
  ASSERT_EQ(groups[0].delegates.size(), 1u);
  EXPECT_FALSE(opd::gen::is_in_place(*groups[0].delegates[0]));
}

TEST(Structured, ErrorsNameFileLineAndOperator) {
  EXPECT_EQ(load_error("- func: add.out(Tensor self, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured: yes\n"),
            "F:2: 'structured' must be True or False, not 'yes'");
  EXPECT_EQ(load_error("- func: acme::f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured: True\n  dispatch:\n    CPU: f_out\n"),
            "F:1: acme::f.out: structured kernels are aten's only (their meta functions build a "
            "plugins/common TensorIterator, which plugin_api does not offer); write the out=, "
            "functional and in-place kernels");
  const std::string not_out =
      "'structured: True' is for an out= operator with one out argument, last, which it returns "
      "(\"... *, Tensor(a!) out) -> Tensor(a!)\")";
  EXPECT_EQ(load_error("- func: f(Tensor x) -> Tensor\n  structured: True\n"
                       "  dispatch:\n    CPU: f\n"),
            "F:1: aten::f: " + not_out);
  EXPECT_EQ(load_error("- func: f.out(Tensor x, *, Tensor(a!) out, Tensor(b!) out2) -> "
                       "(Tensor(a!), Tensor(b!))\n  structured: True\n  dispatch:\n    CPU: f\n"),
            "F:1: aten::f.out: " + not_out);
  EXPECT_EQ(load_error("- func: f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured: True\n"),
            "F:1: aten::f.out: 'structured: True' needs `dispatch:` naming its impls");
  EXPECT_EQ(load_error("- func: f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured: True\n  dispatch:\n    CPU, Meta: f_out\n"),
            "F:1: aten::f.out: 'structured: True' dispatches to backend impls; Meta is not one "
            "(Meta is generated from the meta function, composites are not structured)");
  EXPECT_EQ(
      load_error(std::string(kOut) + "- func: add.Tensor(Tensor self, Tensor other) -> Tensor\n"
                                     "  structured_delegate: add.outt\n"),
      "F:5: aten::add.Tensor: structured_delegate 'add.outt' is not a 'structured: True' "
      "operator of this file");
  EXPECT_EQ(
      load_error(std::string(kOut) + "- func: add.Tensor(Tensor self, Tensor other) -> Tensor\n"
                                     "  structured_delegate: add.out\n"),
      "F:5: aten::add.Tensor: its arguments must be those of its structured_delegate "
      "add.out without `out` (alias annotations aside)");
  EXPECT_EQ(load_error(std::string(kOut) +
                       "- func: add.two(Tensor self, Tensor other, *, Scalar alpha=1) -> "
                       "(Tensor, Tensor)\n"
                       "  structured_delegate: add.out\n"),
            "F:5: aten::add.two: a structured_delegate is functional (returns one new Tensor, "
            "writes nothing) or in-place (writes and returns its first argument, and nothing "
            "else)");
}

class EmitStructured : public ::testing::Test {
 protected:
  void emit(const std::string& yaml) {
    TempYaml f(yaml);
    opd::gen::emit_native(load_strict(f), {"fns.yaml", out_.path().string()});
  }
  std::string read(const std::string& relative) const { return out_.read(relative); }

  OutputDir out_{"opd_gen_structured_test"};
};

// Per backend: the out=, functional and in-place kernels (meta function, impl, result); on Meta
// the same without the impl.
TEST_F(EmitStructured, KernelsForEveryBackendAndMeta) {
  emit(std::string(kOut) + kFunctional + kInPlace);
  EXPECT_THAT(read("include/opd/native/meta_functions.h"),
              HasSubstr("// fns.yaml:1  add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
                        "Tensor(a!) out) -> Tensor(a!)\ncommon::TensorIterator add(const Tensor& "
                        "out, const Tensor& self, const Tensor& other, const Scalar& alpha);\n"));
  const std::string header = read("include/opd/native/CUDA.h");
  EXPECT_THAT(header, HasSubstr("void add_out(const common::TensorIterator& iter, const Tensor& "
                                "self, const Tensor& other, const Scalar& alpha);\n"));
  EXPECT_THAT(header, Not(HasSubstr("add_Tensor")));
  const std::string cuda = read("src/register_CUDA.cpp");
  EXPECT_THAT(cuda,
              HasSubstr("Tensor& structured_add_out(const Tensor& self, const Tensor& other, "
                        "const Scalar& alpha, Tensor& out) {\n"
                        "  common::TensorIterator iter = meta::add(out, self, other, alpha);\n"
                        "  native::add_out(iter, self, other, alpha);\n"
                        "  out.bump_version();\n  return out;\n}\n"));
  EXPECT_THAT(cuda,
              HasSubstr("Tensor structured_add_Tensor(const Tensor& self, const Tensor& other, "
                        "const Scalar& alpha) {\n"
                        "  common::TensorIterator iter = meta::add(Tensor(), self, other, alpha);\n"
                        "  native::add_out(iter, self, other, alpha);\n"
                        "  return std::move(iter).output();\n}\n"));
  EXPECT_THAT(cuda,
              HasSubstr("Tensor& structured_add__Tensor(Tensor& self, const Tensor& other, "
                        "const Scalar& alpha) {\n"
                        "  common::TensorIterator iter = meta::add(self, self, other, alpha);\n"
                        "  native::add_out(iter, self, other, alpha);\n"
                        "  self.bump_version();\n  return self;\n}\n"));
  // Registered at the YAML lines of the three operators.
  EXPECT_THAT(cuda, HasSubstr("#line 1 \"fns.yaml\"\n  m.impl(\"add.out\", "
                              "OPD_FN(structured_add_out));\n"));
  EXPECT_THAT(cuda, HasSubstr("#line 5 \"fns.yaml\"\n  m.impl(\"add.Tensor\", "
                              "OPD_FN(structured_add_Tensor));\n"));
  EXPECT_THAT(cuda, HasSubstr("#line 7 \"fns.yaml\"\n  m.impl(\"add_.Tensor\", "
                              "OPD_FN(structured_add__Tensor));\n"));
  const std::string meta = read("src/register_Meta.cpp");
  EXPECT_THAT(meta, HasSubstr("  common::TensorIterator iter = meta::add(Tensor(), self, other, "
                              "alpha);\n  return std::move(iter).output();\n"));
  EXPECT_THAT(meta, Not(HasSubstr("native::add_out")));
  EXPECT_THAT(read("include/opd/native/Meta.h"), Not(HasSubstr("add_out")));
}

// A delegate's own dispatch entry for a key is its kernel there (the CPU's fast path); the
// other keys get the generated one.
TEST_F(EmitStructured, ADelegatesOwnKernelWinsForItsKey) {
  emit(std::string(kOut) + kFunctional + "  dispatch:\n    CPU: add_Tensor\n" + kInPlace);
  EXPECT_THAT(read("include/opd/native/CPU.h"),
              HasSubstr("Tensor add_Tensor(const Tensor& self, const Tensor& other, const "
                        "Scalar& alpha);\n"));
  const std::string cpu = read("src/register_CPU.cpp");
  EXPECT_THAT(cpu, HasSubstr("m.impl(\"add.Tensor\", OPD_FN(add_Tensor));"));
  EXPECT_THAT(cpu, Not(HasSubstr("structured_add_Tensor")));
  EXPECT_THAT(cpu, HasSubstr("m.impl(\"add_.Tensor\", OPD_FN(structured_add__Tensor));"));
  EXPECT_THAT(read("src/register_CUDA.cpp"),
              HasSubstr("m.impl(\"add.Tensor\", OPD_FN(structured_add_Tensor));"));
}

// An operator with no argument but `out`: no stray commas.
TEST_F(EmitStructured, AnOperatorWithOnlyItsOutArgument) {
  emit(
      "- func: one.out(*, Tensor(a!) out) -> Tensor(a!)\n"
      "  structured: True\n  dispatch:\n    CPU: one_out\n"
      "- func: one() -> Tensor\n  structured_delegate: one.out\n");
  EXPECT_THAT(read("include/opd/native/meta_functions.h"),
              HasSubstr("common::TensorIterator one(const Tensor& out);\n"));
  EXPECT_THAT(read("include/opd/native/CPU.h"),
              HasSubstr("void one_out(const common::TensorIterator& iter);\n"));
  EXPECT_THAT(read("src/register_CPU.cpp"),
              HasSubstr("Tensor structured_one() {\n"
                        "  common::TensorIterator iter = meta::one(Tensor());\n"
                        "  native::one_out(iter);\n"
                        "  return std::move(iter).output();\n}\n"));
}

}  // namespace
