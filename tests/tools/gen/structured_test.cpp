// Structured kernels (tools/gen/structured.cpp, emit_native.cpp): the groups of our YAML, the
// kernels opd-gen writes around a meta function and an impl, and the errors on entries that
// cannot be structured, naming the file and line.

#include "structured.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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
    if (g.iterator) {
      // A functional variant and, but for isposinf/isneginf (as PyTorch), an in-place one.
      EXPECT_GE(g.delegates.size(), 1u) << g.meta_name;
      EXPECT_LE(g.delegates.size(), 2u) << g.meta_name;
      for (const auto* d : g.delegates) {
        EXPECT_EQ(d->structured_delegate, opd::gen::impl_name(g.out->schema)) << g.meta_name;
      }
    } else {
      // The reductions, scans and softmax (MetaBase): a functional variant and at most an
      // in-place one.
      ASSERT_GE(g.delegates.size(), 1u) << g.meta_name;
      for (const auto* d : g.delegates) {
        EXPECT_EQ(d->structured_delegate, opd::gen::impl_name(g.out->schema)) << g.meta_name;
      }
    }
  }
  // The groups that came first, in the YAML's order, among the others of Operators I.
  const std::vector<std::string> first = {"add",
                                          "sub",
                                          "mul",
                                          "div",
                                          "sum_IntList",
                                          "mean",
                                          "amax",
                                          "amin",
                                          "argmax",
                                          "_softmax",
                                          "_log_softmax",
                                          "_softmax_backward_data",
                                          "_log_softmax_backward_data"};
  auto at = metas.begin();
  for (const std::string& name : first) {
    at = std::find(at, metas.end(), name);
    EXPECT_NE(at, metas.end()) << name << " is not a structured group, or out of order";
  }
  EXPECT_GE(metas.size(), 100u);
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

TEST(Structured, InheritsIsTensorIteratorBaseOrMetaBaseOnAStructuredOperator) {
  EXPECT_EQ(load_error("- func: f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured: True\n  structured_inherits: TensorIterator\n"
                       "  dispatch:\n    CPU: f_out\n"),
            "F:3: 'structured_inherits' must be TensorIteratorBase or MetaBase, not "
            "'TensorIterator'");
  EXPECT_EQ(load_error("- func: f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured_inherits: MetaBase\n"),
            "F:1: aten::f.out: 'structured_inherits' is for a 'structured: True' operator");
  EXPECT_EQ(load_error("- func: acme::f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  structured: True\n  structured_inherits: MetaBase\n"
                       "  dispatch:\n    CPU: f_out\n"),
            "F:1: acme::f.out: structured kernels are aten's only (their meta functions are "
            "plugins/common's, which plugin_api does not offer); write the out=, functional and "
            "in-place kernels");
  TempYaml f(std::string(kOut) + "  structured_inherits: TensorIteratorBase\n" + kFunctional +
             "- func: sum.IntList_out(Tensor self, int[1]? dim, *, Tensor(a!) out) -> "
             "Tensor(a!)\n"
             "  structured: True\n  structured_inherits: MetaBase\n"
             "  dispatch:\n    CPU: sum_out\n");
  auto groups = structured_groups(load_strict(f), f.path());
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_TRUE(groups[0].iterator);
  EXPECT_FALSE(groups[1].iterator);
  EXPECT_EQ(groups[1].meta_name, "sum_IntList");
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

// MetaBase (a reduction): the meta function returns the output, the impl takes it last, and
// an out= or in-place kernel copies a proxy output back into the tensor it writes.
constexpr const char* kSumOut =
    "- func: sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
    "dtype=None, Tensor(a!) out) -> Tensor(a!)\n"
    "  structured: True\n  structured_inherits: MetaBase\n"
    "  dispatch:\n    CPU, CUDA: sum_out\n";
constexpr const char* kSumFunctional =
    "- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
    "dtype=None) -> Tensor\n"
    "  structured_delegate: sum.IntList_out\n";

TEST_F(EmitStructured, MetaBaseKernelsForEveryBackendAndMeta) {
  emit(std::string(kSumOut) + kSumFunctional);
  const std::string params =
      "const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype";
  EXPECT_THAT(read("include/opd/native/meta_functions.h"),
              HasSubstr("Tensor sum_IntList(const Tensor& out, " + params + ");\n"));
  const std::string header = read("include/opd/native/CPU.h");
  EXPECT_THAT(header, HasSubstr("// (structured: writes out, contiguous, made by the meta "
                                "function)\nvoid sum_out(" +
                                params + ", const Tensor& out);\n"));
  EXPECT_THAT(header, Not(HasSubstr("sum_dim_IntList")));
  const std::string cpu = read("src/register_CPU.cpp");
  EXPECT_THAT(cpu,
              HasSubstr("Tensor& structured_sum_IntList_out(" + params +
                        ", Tensor& out) {\n"
                        "  Tensor result = meta::sum_IntList(out, self, dim, keepdim, dtype);\n"
                        "  native::sum_out(self, dim, keepdim, dtype, result);\n"
                        "  if (result.is_same(out)) {\n    out.bump_version();\n  } else {\n"
                        "    out.copy_(result);  // a proxy output; copy_ bumps the version\n"
                        "  }\n  return out;\n}\n"));
  EXPECT_THAT(
      cpu, HasSubstr("Tensor structured_sum_dim_IntList(" + params +
                     ") {\n"
                     "  Tensor result = meta::sum_IntList(Tensor(), self, dim, keepdim, dtype);\n"
                     "  native::sum_out(self, dim, keepdim, dtype, result);\n"
                     "  return result;\n}\n"));
  EXPECT_THAT(cpu, HasSubstr("m.impl(\"sum.IntList_out\", OPD_FN(structured_sum_IntList_out));"));
  EXPECT_THAT(cpu, HasSubstr("m.impl(\"sum.dim_IntList\", OPD_FN(structured_sum_dim_IntList));"));
  EXPECT_THAT(read("src/register_CUDA.cpp"), HasSubstr("native::sum_out(self, dim, keepdim, "
                                                       "dtype, result);\n"));
  const std::string meta = read("src/register_Meta.cpp");
  EXPECT_THAT(
      meta, HasSubstr("  Tensor result = meta::sum_IntList(Tensor(), self, dim, keepdim, dtype);\n"
                      "  return result;\n"));
  EXPECT_THAT(meta, Not(HasSubstr("native::sum_out")));
  EXPECT_THAT(read("include/opd/native/Meta.h"), Not(HasSubstr("sum_out")));
}

// An in-place variant, an out argument of another name, and no argument but `out`.
TEST_F(EmitStructured, MetaBaseInPlaceOutNamesAndOnlyTheOutArgument) {
  emit(
      "- func: f.out(Tensor self, *, Tensor(a!) grad_input) -> Tensor(a!)\n"
      "  structured: True\n  structured_inherits: MetaBase\n  dispatch:\n    CPU: f_out\n"
      "- func: f_(Tensor(a!) self) -> Tensor(a!)\n  structured_delegate: f.out\n"
      "- func: one.out(*, Tensor(a!) out) -> Tensor(a!)\n"
      "  structured: True\n  structured_inherits: MetaBase\n  dispatch:\n    CPU: one_out\n"
      "- func: one() -> Tensor\n  structured_delegate: one.out\n");
  EXPECT_THAT(read("include/opd/native/meta_functions.h"),
              HasSubstr("Tensor f(const Tensor& grad_input, const Tensor& self);\n"));
  EXPECT_THAT(read("include/opd/native/meta_functions.h"),
              HasSubstr("Tensor one(const Tensor& out);\n"));
  const std::string header = read("include/opd/native/CPU.h");
  EXPECT_THAT(header, HasSubstr("void f_out(const Tensor& self, const Tensor& grad_input);\n"));
  EXPECT_THAT(header, HasSubstr("void one_out(const Tensor& out);\n"));
  const std::string cpu = read("src/register_CPU.cpp");
  EXPECT_THAT(cpu, HasSubstr("Tensor& structured_f_(Tensor& self) {\n"
                             "  Tensor result = meta::f(self, self);\n"
                             "  native::f_out(self, result);\n"
                             "  if (result.is_same(self)) {\n    self.bump_version();\n  } else {\n"
                             "    self.copy_(result);  // a proxy output; copy_ bumps the version\n"
                             "  }\n  return self;\n}\n"));
  EXPECT_THAT(cpu, HasSubstr("Tensor& structured_f_out(const Tensor& self, Tensor& grad_input) {\n"
                             "  Tensor result = meta::f(grad_input, self);\n"));
  EXPECT_THAT(cpu, HasSubstr("Tensor structured_one() {\n"
                             "  Tensor result = meta::one(Tensor());\n"
                             "  native::one_out(result);\n"
                             "  return result;\n}\n"));
}

}  // namespace
