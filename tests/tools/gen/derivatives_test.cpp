// opd-gen's derivatives.yaml reader (tools/gen/derivatives.cpp): entries matched to the
// operators, and its errors on malformed files and formulas, naming the file and line.

#include "derivatives.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "temp_yaml.h"

namespace {

using opd::gen::test::derivatives_error;
using opd::gen::test::load_strict;
using opd::gen::test::TempYaml;

constexpr const char* kFunctions =
    "- func: foo(Tensor x, Tensor y, int n) -> Tensor\n"
    "- func: two(Tensor x) -> (Tensor, Tensor)\n"
    "- func: kw(Tensor self, int int) -> Tensor\n";

std::string error(const std::string& derivatives) {
  return derivatives_error(kFunctions, derivatives);
}

TEST(Derivatives, EntriesAndFormulasInFileOrder) {
  TempYaml f(kFunctions), d("- name: foo(Tensor x, Tensor y, int n) -> Tensor\n"
                            "  y: max_min_backward(grad, y, x, /*is_max=*/true)\n"
                            "  x: sum(grad, IntArrayRef({n}), true)\n"
                            "- name: two(Tensor x) -> (Tensor, Tensor)\n"
                            "  output_differentiability: [True, false]\n"
                            "  x: std::vector<::opd::Tensor>{grad}[0]\n");
  auto fs = load_strict(f);
  auto ds = opd::gen::load_derivatives(d.path(), fs);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].node_name, "FooBackward0");
  EXPECT_EQ(ds[0].line, 1);
  ASSERT_EQ(ds[0].formulas.size(), 2u);
  EXPECT_EQ(ds[0].formulas[0].input, "y");
  EXPECT_EQ(ds[0].formulas[0].formula, "max_min_backward(grad, y, x, /*is_max=*/true)");
  EXPECT_EQ(ds[0].formulas[1].line, 3);
  EXPECT_EQ(ds[1].output_differentiability, (std::vector<bool>{true, false}));
  EXPECT_EQ(ds[1].formulas[0].formula, "std::vector<::opd::Tensor>{grad}[0]");
}

// Issue 29: these aborted opd-gen (yaml-cpp's TypedBadConversion, exit 134).
TEST(Derivatives, NodesOfTheWrongKindAreErrorsNamingFileAndLine) {
  EXPECT_EQ(error("- name: [1]\n"), "D:1: 'name' must be a string, not a list");
  EXPECT_EQ(error("- name: {a: 1}\n"), "D:1: 'name' must be a string, not a mapping");
  EXPECT_EQ(error("- name: foo(Tensor x, Tensor y, int n) -> Tensor\n  [x]: grad\n"),
            "D:2: a field name in an entry must be a string, not a list");
  EXPECT_EQ(error("- name: two(Tensor x) -> (Tensor, Tensor)\n"
                  "  output_differentiability: [True, maybe]\n"),
            "D:2: a flag of 'output_differentiability' must be True or False, not 'maybe'");
  EXPECT_EQ(error("- name: two(Tensor x) -> (Tensor, Tensor)\n"
                  "  output_differentiability: [[True], False]\n"),
            "D:2: a flag of 'output_differentiability' must be True or False, not a list");
  EXPECT_EQ(error("- name: two(Tensor x) -> (Tensor, Tensor)\n"
                  "  output_differentiability: {a: 1}\n"),
            "D:2: 'output_differentiability' must be a list, not a mapping");
  EXPECT_EQ(error("- name: foo(Tensor x, Tensor y, int n) -> Tensor\n  x: [grad]\n"),
            "D:2: the formula for 'x' must be a string, not a list");
  EXPECT_EQ(error("- name: foo(Tensor x, Tensor y, int n) -> Tensor\n  x:\n"),
            "D:2: the formula for 'x' must be a string, not empty");
  EXPECT_EQ(error("- [name]\n"), "D:1: an entry must be a mapping with 'name'");
  EXPECT_EQ(error("- x: grad\n"), "D:1: an entry must be a mapping with 'name'");
  EXPECT_EQ(error("name: foo\n"), "D:1: expected a list of entries");
  EXPECT_EQ(error("- name: foo(Tensor x, Tensor y, int n) -> Tensor\n  x: grad\n  x: grad\n"),
            "D:3: 'x' appears twice in an entry (first at line 2)");
}

// Issue 29, Note [Formula checks]: a formula is one C++ expression in a generated statement.
TEST(Derivatives, AFormulaThatCouldLeaveItsStatementIsRefused) {
  const std::string foo = "- name: foo(Tensor x, Tensor y, int n) -> Tensor\n";
  EXPECT_EQ(error(foo + "  x: 'grad; system(\"x\")'\n"),
            "D:2: the formula for 'x' is not one C++ expression: it holds ';' at column 5 (a "
            "formula is one expression)");
  EXPECT_EQ(error(foo + "  x: grad) + (grad\n"),
            "D:2: the formula for 'x' is not one C++ expression: its ')' at column 5 has no '('");
  EXPECT_EQ(error(foo + "  x: grad // y\n"),
            "D:2: the formula for 'x' is not one C++ expression: it holds a line comment at "
            "column 6 (use /* */)");
  EXPECT_EQ(error(foo + "  x: \"grad\\n#define x\"\n"),
            "D:2: the formula for 'x' is not one C++ expression: it holds byte 0x0a at column 5 "
            "(a formula is one line of printable ASCII)");
  EXPECT_EQ(error(foo + "  x: grad <% 1 %>\n"),
            "D:2: the formula for 'x' is not one C++ expression: it holds the digraph '<%' at "
            "column 6 (write '{')");
  // An argument named by a keyword is `int_` in generated signatures: a formula cannot use it.
  EXPECT_EQ(error("- name: kw(Tensor self, int int) -> Tensor\n  self: grad * int\n"),
            "D:2: the formula for 'self' uses argument 'int', whose name is a C++ keyword");
}

}  // namespace
