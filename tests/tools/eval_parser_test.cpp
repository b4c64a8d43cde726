// opd eval's interpreter without plugins: parsing and syntax errors, evaluation (calls on
// operators registered here, tensor literals, values printed as PyTorch's repr and as JSON), and
// the trace printer. The binder's own tests, overload resolution and repr, are in
// tests/core/bind/.

#include "eval_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bind/host_tensors.h"
#include "error_text.h"
#include "eval_program.h"
#include "opd/bind/print.h"
#include "opd/bind/trace_lines.h"
#include "opd/dispatch_observer.h"
#include "opd/dispatcher.h"
#include "opd/library.h"

namespace opd::cli::eval {
namespace {

using bind::FactoryDefaults;
using bind::repr;
using bind::to_json;
using bind::TracePrinter;
using test_util::error_text;
using test_util::new_tensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---- Test operators: float32 kernels on CPU (and a shape-only one on Meta) --------------------

Tensor ones_kernel(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout>,
                   std::optional<Device> device, std::optional<bool>) {
  ScalarType t = dtype.value_or(kFloat);
  Tensor out = new_tensor(size, t, device.value_or(Device(DeviceType::CPU)));
  if (out.is_meta()) return out;
  OPD_CHECK(t == kFloat || t == kDouble, "test_eval::ones: float32 or float64 only");
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (t == kFloat) out.data_ptr<float>()[i] = 1;
    if (t == kDouble) out.data_ptr<double>()[i] = 1;
  }
  return out;
}

std::vector<std::string> g_ran;  // which kernel served each call

Tensor add_tensor_kernel(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  g_ran.push_back("add.Tensor");
  OPD_CHECK(a.numel() == b.numel(), "test_eval::add: same sizes only");
  Tensor out = new_tensor(a.sizes(), kFloat, a.device());
  for (int64_t i = 0; i < a.numel(); ++i) {
    out.data_ptr<float>()[i] = a.data_ptr<float>()[i] + alpha.to<float>() * b.data_ptr<float>()[i];
  }
  return out;
}

Tensor add_scalar_kernel(const Tensor& a, const Scalar& other, const Scalar& alpha) {
  g_ran.push_back("add.Scalar");
  Tensor out = new_tensor(a.sizes(), kFloat, a.device());
  for (int64_t i = 0; i < a.numel(); ++i) {
    out.data_ptr<float>()[i] = a.data_ptr<float>()[i] + alpha.to<float>() * other.to<float>();
  }
  return out;
}

std::tuple<Tensor, Tensor> max_dim_kernel(const Tensor& a, int64_t dim, bool keepdim) {
  Tensor indices = new_tensor(std::vector<int64_t>{1}, kLong, a.device());
  indices.data_ptr<int64_t>()[0] = dim;
  return {a, indices};
}

OPD_LIBRARY(test_eval, m) {
  m.def(
      "ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor");
  m.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor");
  m.def("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
}

OPD_LIBRARY_IMPL(test_eval, CPU, m) {
  m.impl("ones", &ones_kernel);
  m.impl("add.Tensor", &add_tensor_kernel);
  m.impl("add.Scalar", &add_scalar_kernel);
  m.impl("max.dim", &max_dim_kernel);
}

OPD_LIBRARY_IMPL(test_eval, Meta, m) { m.impl("ones", &ones_kernel); }

// A kernel that throws 42 (not a std::exception) for what == 42 and std::out_of_range otherwise.
OPD_LIBRARY_FRAGMENT(test_eval, m) { m.def("throws(Tensor self, int what) -> Tensor"); }

OPD_LIBRARY_IMPL(test_eval, CPU, m) {
  m.impl("throws", [](const Tensor&, int64_t what) -> Tensor {
    if (what == 42) throw 42;
    throw std::out_of_range("test_eval::throws: out of range");
  });
}

// What the meta plugin provides: tensor(..., device='meta') is made by aten::empty.
OPD_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("empty.memory_format",
         [](IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout>,
            std::optional<Device> device, std::optional<bool>, std::optional<MemoryFormat>) {
           return new_tensor(size, dtype.value_or(kFloat), device.value_or(DeviceType::Meta));
         });
}

std::string run(std::string_view program, FactoryDefaults defaults = {}) {
  Evaluator e(defaults);
  return repr(e.run(program));
}

std::string json(std::string_view program) {
  Evaluator e;
  return to_json(e.run(program)).dump();
}

// ---- Parsing ----------------------------------------------------------------------------------

TEST(EvalParser, StatementsAssignmentsCallsAndKeywords) {
  Program p = parse_program("x = ones([2, 3]); aten::add.Tensor(x, -1.5, alpha=2,);");
  ASSERT_EQ(p.statements.size(), 2u);
  EXPECT_EQ(p.statements[0].target, "x");
  const Expr& ones = p.statements[0].expr;
  EXPECT_EQ(ones.kind, Expr::Kind::Call);
  EXPECT_EQ(ones.name, "ones");
  ASSERT_EQ(ones.items.size(), 1u);
  EXPECT_EQ(ones.items[0].kind, Expr::Kind::List);
  EXPECT_EQ(ones.items[0].items[1].literal, IValue(3));
  const Expr& add = p.statements[1].expr;
  EXPECT_EQ(p.statements[1].target, "");
  EXPECT_EQ(add.name, "aten::add.Tensor");
  EXPECT_EQ(add.items[0].kind, Expr::Kind::Name);
  EXPECT_EQ(add.items[1].literal, IValue(-1.5));
  EXPECT_THAT(add.kwarg_names, ElementsAre("alpha"));
  EXPECT_EQ(add.kwarg_values[0].literal, IValue(2));
}

TEST(EvalParser, Literals) {
  Program p = parse_program(
      "[True, False, None, 'a\\'b', \"c\", 1e-3, .5, 2., 3j, -9223372036854775808, torch.float64]");
  const auto& items = p.statements[0].expr.items;
  ASSERT_EQ(items.size(), 11u);
  EXPECT_EQ(items[0].literal, IValue(true));
  EXPECT_EQ(items[1].literal, IValue(false));
  EXPECT_TRUE(items[2].literal.is_none());
  EXPECT_EQ(items[3].literal, IValue("a'b"));
  EXPECT_EQ(items[4].literal, IValue("c"));
  EXPECT_EQ(items[5].literal, IValue(1e-3));
  EXPECT_EQ(items[6].literal, IValue(0.5));
  EXPECT_EQ(items[7].literal, IValue(2.0));
  EXPECT_EQ(items[8].literal, IValue(std::complex<double>(0, 3)));
  EXPECT_EQ(items[9].literal, IValue(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(items[10].kind, Expr::Kind::Name);
  EXPECT_EQ(items[10].name, "torch.float64");
}

// `x + y * -z ** 2 @ w` as Python reads it; methods chain on any primary.
TEST(EvalParser, OperatorsFollowPythonsPrecedence) {
  Program p = parse_program("x + y * -z ** 2 - 1 <= w; mm(y, y).sum(dim=[0]).neg(); (x + y) @ w");
  const Expr& cmp = p.statements[0].expr;
  ASSERT_EQ(cmp.kind, Expr::Kind::Binary);
  EXPECT_EQ(cmp.name, "<=");
  const Expr& sub = cmp.items[0];  // (x + (y * -(z ** 2))) - 1
  EXPECT_EQ(sub.name, "-");
  EXPECT_EQ(sub.items[1].literal, IValue(1));
  const Expr& add = sub.items[0];
  EXPECT_EQ(add.name, "+");
  EXPECT_EQ(add.items[0].name, "x");
  const Expr& mul = add.items[1];
  EXPECT_EQ(mul.name, "*");
  ASSERT_EQ(mul.items[1].kind, Expr::Kind::Negate);
  const Expr& pow = mul.items[1].items[0];
  EXPECT_EQ(pow.name, "**");
  EXPECT_EQ(pow.items[0].name, "z");
  const Expr& neg = p.statements[1].expr;
  ASSERT_EQ(neg.kind, Expr::Kind::Method);
  EXPECT_EQ(neg.name, "neg");
  const Expr& sum = neg.items[0];
  ASSERT_EQ(sum.kind, Expr::Kind::Method);
  EXPECT_EQ(sum.name, "sum");
  EXPECT_THAT(sum.kwarg_names, ElementsAre("dim"));
  EXPECT_EQ(sum.items[0].kind, Expr::Kind::Call);
  EXPECT_EQ(sum.items[0].name, "mm");
  const Expr& matmul = p.statements[2].expr;
  EXPECT_EQ(matmul.name, "@");
  EXPECT_EQ(matmul.items[0].name, "+");
  // A negative literal stays a literal (the int64 minimum fits), unless a power follows.
  EXPECT_EQ(parse_program("-9223372036854775808").statements[0].expr.literal,
            IValue(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(parse_program("-2 ** 2").statements[0].expr.kind, Expr::Kind::Negate);
}

TEST(EvalParser, OperatorSyntaxErrors) {
  EXPECT_THAT(error_text<ValueError>([] { parse_program("x < y < z"); }),
              StartsWith("opd eval: chained comparisons are not supported at column 7"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("x +"); }),
              StartsWith("opd eval: expected an expression but found the end of the program"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("x.1()"); }),
              StartsWith("opd eval: expected ';' between statements but found '.1' at column 2"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("f(x).(1)"); }),
              StartsWith("opd eval: expected a method name after '.' but found '('"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("f(x).sum"); }),
              StartsWith("opd eval: expected '(' after the method name 'sum'"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("(x + y"); }),
              StartsWith("opd eval: expected ')' but found the end of the program"));
}

// Operators nest as brackets do: long chains and deep unary minus are refused at the limit, not
// by a stack overflow in the evaluator or ~Expr.
TEST(EvalParser, OperatorChainsPastTheLimitAreRefused) {
  std::string sum = "x";
  for (int i = 0; i < kMaxNesting; ++i) sum += " + x";
  EXPECT_NO_THROW(parse_program(sum));
  EXPECT_THAT(error_text<ValueError>([&] { parse_program(sum + " + x"); }),
              HasSubstr("too deeply nested (more than 200 levels of lists, calls and operators)"));
  std::string negations(20000, '-');
  EXPECT_THAT(error_text<ValueError>([&] { parse_program(negations + "x"); }),
              HasSubstr("too deeply nested"));
  std::string powers = "x";
  for (int i = 0; i < 20000; ++i) powers += " ** x";
  EXPECT_THAT(error_text<ValueError>([&] { parse_program(powers); }),
              HasSubstr("too deeply nested"));
  std::string methods = "x";
  for (int i = 0; i < 20000; ++i) methods += ".neg()";
  EXPECT_THAT(error_text<ValueError>([&] { parse_program("f(" + methods + ")"); }),
              HasSubstr("too deeply nested"));
}

TEST(EvalParser, SyntaxErrorsNameTheColumnWithACaret) {
  EXPECT_EQ(error_text<ValueError>([] { parse_program("add(x,, y)"); }),
            "opd eval: expected an expression but found ',' at column 7\n  add(x,, y)\n        ^");
  EXPECT_EQ(error_text<ValueError>([] { parse_program("add(x"); }),
            "opd eval: expected ',' or ')' but found the end of the program at column 6\n"
            "  add(x\n       ^");
  EXPECT_THAT(error_text<ValueError>([] { parse_program("f(a=1, 2)"); }),
              StartsWith("opd eval: positional argument follows keyword argument at column 8"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("x = 'abc"); }),
              StartsWith("opd eval: unterminated string at column 5"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("1 2"); }),
              StartsWith("opd eval: expected ';' between statements but found '2' at column 3"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program(" ; "); }),
              StartsWith("opd eval: the program has no statement"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("99999999999999999999"); }),
              StartsWith("opd eval: integer literal out of the int64 range"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("f(x=1, x=2)"); }),
              StartsWith("opd eval: keyword argument repeated: x"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("a $ b"); }),
              StartsWith("opd eval: unexpected character '$' at column 3"));
}

// Found by tests/fuzz/eval_parser_fuzzer.cpp: a newline in the program or in a string token
// broke the message's three lines and moved the caret.
TEST(EvalParser, SyntaxErrorsKeepThreeLinesWhateverTheProgramHolds) {
  EXPECT_EQ(error_text<ValueError>([] { parse_program("1 'a\nb\\'\\\\c'"); }),
            "opd eval: expected ';' between statements but found 'a\\nb\\'\\\\c' at column 3\n"
            "  1 'a b\\'\\\\c'\n"
            "    ^");
  EXPECT_EQ(error_text<ValueError>([] { parse_program("x\t=\n\x01"); }),
            "opd eval: unexpected character '\\x01' at column 5\n  x = \x01\n      ^");
}

// `n` lists or calls around 1: "[[1]]", "f(f(1))".
std::string nested(int n, std::string_view open, std::string_view close) {
  std::string text;
  for (int i = 0; i < n; ++i) text += open;
  text += "1";
  for (int i = 0; i < n; ++i) text += close;
  return text;
}

const std::string kTooDeep =
    "opd eval: too deeply nested (more than 200 levels of lists, calls and operators) at column ";

// Defect 11 of issue 13: ~20,000 nested '[' or ~15,000 nested calls overflowed the stack.
TEST(EvalParser, NestingUpToTheLimitParses) {
  ASSERT_EQ(kMaxNesting, 200);
  Program lists = parse_program(nested(kMaxNesting, "[", "]"));
  int depth = 0;
  for (const Expr* e = &lists.statements[0].expr; e->kind == Expr::Kind::List; e = &e->items[0]) {
    ++depth;
  }
  EXPECT_EQ(depth, kMaxNesting);
  Program calls = parse_program(nested(kMaxNesting, "f(", ")"));
  EXPECT_EQ(calls.statements[0].expr.name, "f");
  EXPECT_NO_THROW(parse_program(nested(kMaxNesting / 2, "f([", "])")));
  // The limit is on depth, not on how many lists there are.
  std::string wide = "[";
  for (int i = 0; i < 1000; ++i) wide += nested(kMaxNesting - 1, "[", "]") + ",";
  EXPECT_EQ(parse_program(wide + "]").statements[0].expr.items.size(), 1000u);
}

TEST(EvalParser, NestingPastTheLimitNamesTheColumnOfTheFirstBracketPastIt) {
  std::string lists = nested(kMaxNesting + 1, "[", "]");
  EXPECT_EQ(error_text<ValueError>([&] { parse_program(lists); }),
            kTooDeep + "201\n  " + lists + "\n  " + std::string(200, ' ') + "^");
  EXPECT_THAT(error_text<ValueError>([] { parse_program(nested(kMaxNesting + 1, "f(", ")")); }),
              StartsWith(kTooDeep + "402\n"));
  // f([f([...: the 201st level is the '(' of the 101st "f([", at column 3 * 101 - 1.
  EXPECT_THAT(error_text<ValueError>([] { parse_program(nested(101, "f([", "])")); }),
              StartsWith(kTooDeep + "302\n"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program("x = 1; y = " + nested(201, "[", "]")); }),
              StartsWith(kTooDeep + "212\n"));
}

TEST(EvalParser, TwentyThousandNestedListsOrCallsAreRefusedWithoutCrashing) {
  EXPECT_THAT(error_text<ValueError>([] { parse_program(nested(20000, "[", "]")); }),
              StartsWith(kTooDeep + "201\n"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program(nested(20000, "[", "")); }),
              StartsWith(kTooDeep + "201\n"));
  EXPECT_THAT(error_text<ValueError>([] { parse_program(nested(15000, "neg(", ")")); }),
              StartsWith(kTooDeep + "804\n"));
  Evaluator e;
  EXPECT_THAT(error_text<ValueError>([&] { e.run(nested(20000, "[", "]")); }),
              StartsWith(kTooDeep + "201\n"));
}

// ---- Evaluation -------------------------------------------------------------------------------

TEST(EvalProgram, CallsBindAndDispatch) {
  g_ran.clear();
  EXPECT_EQ(run("x = test_eval::ones([2, 3]); test_eval::add(x, x, alpha=2)"),
            "tensor([[3., 3., 3.],\n        [3., 3., 3.]])");
  EXPECT_EQ(run("test_eval::add(test_eval::ones(2), 0.5)"), "tensor([1.5000, 1.5000])");
  EXPECT_THAT(g_ran, ElementsAre("add.Tensor", "add.Scalar"));
  EXPECT_EQ(run("test_eval::ones(2, 3)", {Device(DeviceType::Meta), std::nullopt}),
            "tensor(..., device='meta', size=(2, 3))");
  EXPECT_EQ(run("test_eval::ones([2])", {std::nullopt, kDouble}),
            "tensor([1., 1.], dtype=torch.float64)");
  EXPECT_EQ(run("test_eval::ones([2], dtype=float32)", {std::nullopt, kDouble}),
            "tensor([1., 1.])");
}

TEST(EvalProgram, ListsNestedToTheLimitEvaluateAndPrint) {
  std::string deepest = nested(kMaxNesting, "[", "]");
  EXPECT_EQ(run(deepest), deepest);
  EXPECT_EQ(json(deepest), deepest);
}

TEST(EvalProgram, ListsNestedThroughVariablesStopAtTheLimitToo) {
  Evaluator e;
  std::string chain = "x = 1";
  for (int i = 0; i < kMaxNesting; ++i) chain += "; x = [x]";
  EXPECT_EQ(repr(e.run(chain)), nested(kMaxNesting, "[", "]"));
  EXPECT_EQ(error_text<ValueError>([&] { e.run("y = 0; y = [1, [x]]"); }),
            "opd eval: too deeply nested (more than 200 levels of lists) at column 16");
  EXPECT_EQ(repr(e.run("x")), nested(kMaxNesting, "[", "]"));
}

// Defect 12 of issue 13: `throw 42` in a kernel terminated opd eval.
TEST(EvalProgram, AKernelThrowingSomethingOtherThanAStdExceptionNamesTheOperator) {
  EXPECT_EQ(error_text<Error>([] { run("test_eval::throws(test_eval::ones([1]), 42)"); }),
            "test_eval::throws: a kernel threw an exception that is not a std::exception");
  // Standard exceptions pass through as they are.
  try {
    run("test_eval::throws(test_eval::ones([1]), 0)");
    ADD_FAILURE() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "test_eval::throws: out of range");
  }
}

TEST(EvalProgram, ValuesOtherThanTensors) {
  EXPECT_EQ(run("1.5"), "1.5");
  EXPECT_EQ(run("2."), "2.0");
  EXPECT_EQ(run("x = 3; x"), "3");
  EXPECT_EQ(run("[1, True, None, 'cpu']"), "[1, True, None, 'cpu']");
  EXPECT_EQ(run("torch.float64"), "torch.float64");
  EXPECT_EQ(run("long"), "torch.int64");
  EXPECT_EQ(run("strided"), "torch.strided");
  EXPECT_EQ(run("inf"), "inf");
  EXPECT_EQ(error_text<ValueError>([] { run("y"); }), "opd eval: name 'y' is not defined");
}

TEST(EvalProgram, NamedReturnsPrintAsStructSequences) {
  EXPECT_EQ(run("test_eval::max(test_eval::ones([2]), 0)"),
            "torch.return_types.max(\nvalues=tensor([1., 1.]),\nindices=tensor([0]))");
  EXPECT_EQ(json("test_eval::max(test_eval::ones([1]), 0)"),
            R"({"values":{"dtype":"float32","shape":[1],"strides":[1],"device":"cpu",)"
            R"("data":[1.0]},"indices":{"dtype":"int64","shape":[1],"strides":[1],)"
            R"("device":"cpu","data":[0]}})");
}

TEST(EvalProgram, TensorLiterals) {
  EXPECT_EQ(run("tensor([[1, 2], [3, 4]], dtype=float64)"),
            "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)");
  EXPECT_EQ(run("tensor([1, 2.5])"), "tensor([1.0000, 2.5000])");
  EXPECT_EQ(run("tensor([1, 2])"), "tensor([1, 2])");
  EXPECT_EQ(run("tensor([True, False])"), "tensor([ True, False])");
  EXPECT_EQ(run("tensor([True, 2])"), "tensor([1, 2])");
  EXPECT_EQ(run("tensor(3)"), "tensor(3)");
  EXPECT_EQ(run("tensor([])"), "tensor([])");
  EXPECT_EQ(run("tensor([1j, 2])"), "tensor([0.+1.j, 2.+0.j])");
  EXPECT_EQ(run("tensor([1.5, -2], dtype=int32)"), "tensor([ 1, -2], dtype=torch.int32)");
  EXPECT_EQ(run("tensor([0.5, 1], dtype=float16)"),
            "tensor([0.5000, 1.0000], dtype=torch.float16)");
  EXPECT_EQ(run("tensor([1, 2], device='meta')"),
            "tensor(..., device='meta', size=(2,), dtype=torch.int64)");
  EXPECT_EQ(run("tensor([1, 2])", {std::nullopt, kDouble}),
            "tensor([1., 2.], dtype=torch.float64)");
  EXPECT_EQ(error_text<ValueError>([] { run("tensor([[1, 2], [3, 4, 5]])"); }),
            "tensor(): expected sequence of length 2 at dim 1 (got 3)");
  EXPECT_EQ(error_text<ValueError>([] { run("tensor([[1, 2], 3])"); }),
            "tensor(): expected sequence of length 2 at dim 1 (got int)");
  EXPECT_EQ(error_text<TypeError>([] { run("tensor(['a'])"); }),
            "tensor(): expected numbers or nested lists of numbers, got str");
  EXPECT_EQ(error_text<TypeError>([] { run("tensor([1], requires_grad=True)"); }),
            "tensor() got an unexpected keyword argument 'requires_grad'");
}

TEST(EvalProgram, Json) {
  EXPECT_EQ(json("tensor([[1, 2], [3, 4]])"),
            R"({"dtype":"int64","shape":[2,2],"strides":[2,1],"device":"cpu","data":[1,2,3,4]})");
  EXPECT_EQ(json("tensor([True])"),
            R"({"dtype":"bool","shape":[1],"strides":[1],"device":"cpu","data":[true]})");
  EXPECT_EQ(json("tensor([nan, -inf, 1j])"),
            R"({"dtype":"complex64","shape":[3],"strides":[1],"device":"cpu",)"
            R"("data":[["nan",0.0],["-inf",0.0],[0.0,1.0]]})");
  EXPECT_EQ(json("tensor([1, 2], device='meta')"),
            R"({"dtype":"int64","shape":[2],"strides":[1],"device":"meta","data":null})");
  EXPECT_EQ(json("[1, 2.5, None, 'a', float64]"), R"([1,2.5,null,"a","float64"])");
}

// ---- Trace ------------------------------------------------------------------------------------

TEST(EvalTrace, PrintsEveryHopWithItsKernelSite) {
  std::ostringstream out;
  {
    DispatchObserverGuard guard(std::make_shared<TracePrinter>(out));
    run("test_eval::add(test_eval::ones([2]), test_eval::ones([2]))");
  }
  std::string trace = out.str();
  EXPECT_THAT(trace, StartsWith("test_eval::ones [call_boxed] DispatchKeySet(CPU) -> CPU: kernel "
                                "registered at tests/tools/eval_parser_test.cpp:"));
  // The key set after the operator's mask: ADInplaceOrView and AutogradCPU fall through.
  EXPECT_THAT(trace, HasSubstr("\ntest_eval::add.Tensor [call_boxed] DispatchKeySet(CPU) -> CPU: "
                               "kernel registered at tests/tools/eval_parser_test.cpp:"));
  EXPECT_EQ(std::count(trace.begin(), trace.end(), '\n'), 3);
  out.str("");
  {
    DispatchObserverGuard guard(std::make_shared<TracePrinter>(out));
    EXPECT_THROW(run("test_eval::ones([2], dtype=int64)"), Error);
  }
  EXPECT_THAT(out.str(), HasSubstr("\ntest_eval::ones raised\n"));
}

}  // namespace
}  // namespace opd::cli::eval
