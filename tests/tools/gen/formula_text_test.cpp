// The text helpers and checks of tools/gen/formula_text.h: identifiers opd-gen may write as code,
// and Note [Formula checks].

#include "formula_text.h"

#include <gtest/gtest.h>

namespace {

using opd::gen::formula_problem;
using opd::gen::is_cpp_identifier;
using opd::gen::is_cpp_keyword;

TEST(FormulaText, Identifiers) {
  EXPECT_TRUE(is_cpp_identifier("add_Tensor"));
  EXPECT_TRUE(is_cpp_identifier("_k2"));
  EXPECT_FALSE(is_cpp_identifier(""));
  EXPECT_FALSE(is_cpp_identifier("2k"));
  EXPECT_FALSE(is_cpp_identifier("k; system(\"x\")"));
  EXPECT_FALSE(is_cpp_identifier("ns::k"));
  EXPECT_FALSE(is_cpp_identifier("k\n"));
  EXPECT_FALSE(is_cpp_identifier("caf\xc3\xa9"));
  EXPECT_FALSE(is_cpp_identifier("class"));
  EXPECT_TRUE(is_cpp_keyword("and_eq"));
  EXPECT_TRUE(is_cpp_keyword("co_yield"));
  EXPECT_FALSE(is_cpp_keyword("self"));
}

TEST(FormulaText, FormulasThatStayOneExpression) {
  for (const char* f :
       {"grad", "grad * other.conj()", "max_min_backward(grad, self, other, /*is_max=*/true)",
        "grad - sum(grad * output.exp(), IntArrayRef({dim}), true)",
        "std::vector<::opd::Tensor>{grad}[0]", "a < b ? grad : -grad"}) {
    EXPECT_EQ(formula_problem(f), "") << f;
  }
}

TEST(FormulaText, FormulasThatCouldLeaveTheirStatement) {
  EXPECT_EQ(formula_problem(" "), "it is empty");
  EXPECT_EQ(formula_problem("grad; system(x)"),
            "it holds ';' at column 5 (a formula is one expression)");
  EXPECT_EQ(formula_problem("grad\n#include <x>"),
            "it holds byte 0x0a at column 5 (a formula is one line of printable ASCII)");
  EXPECT_EQ(formula_problem("grad\xe2\x80\xae"),
            "it holds byte 0xe2 at column 5 (a formula is one line of printable ASCII)");
  EXPECT_EQ(formula_problem("grad # x"), "it holds '#' at column 6");
  // Comments too: what a comment holds is not the checks' business to guess.
  EXPECT_EQ(formula_problem("/* ; */ grad"),
            "it holds ';' at column 4 (a formula is one expression)");
  EXPECT_EQ(formula_problem("grad \\"), "it holds '\\' at column 6");
  EXPECT_EQ(formula_problem("f(\")\")"),
            "it holds '\"' at column 3 (no string or character literals)");
  EXPECT_EQ(formula_problem("f(')')"),
            "it holds \"'\" at column 3 (no string or character literals)");
  EXPECT_EQ(formula_problem("grad // x"), "it holds a line comment at column 6 (use /* */)");
  EXPECT_EQ(formula_problem("grad /* x"), "the comment at column 6 is not closed");
  EXPECT_EQ(formula_problem("f(grad))"), "its ')' at column 8 has no '('");
  EXPECT_EQ(formula_problem("f(grad]"), "its ']' at column 7 closes the '(' at column 2");
  EXPECT_EQ(formula_problem("[&] { return grad }()}"), "its '}' at column 22 has no '{'");
  EXPECT_EQ(formula_problem("f({grad)"), "its ')' at column 8 closes the '{' at column 3");
  EXPECT_EQ(formula_problem("f(grad"), "its '(' at column 2 is not closed");
  EXPECT_EQ(formula_problem("grad %> x"), "it holds the digraph '%>' at column 6 (write '}')");
  EXPECT_EQ(formula_problem("x<:0:>"), "it holds the digraph '<:' at column 2 (write '[')");
  EXPECT_EQ(formula_problem("v<:::x>"), "it holds the digraph '<:' at column 2 (write '[')");
  EXPECT_EQ(formula_problem("%:define"), "it holds the digraph '%:' at column 1 (write '#')");
}

}  // namespace
