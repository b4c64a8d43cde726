#pragma once

// The syntax tree of an `opd eval` program, with Python's precedence:
//   program    := statement (';' statement)*          empty statements are allowed
//   statement  := NAME '=' expr | expr
//   expr       := additive [('==' | '!=' | '<' | '<=' | '>' | '>=') additive]
//   additive   := term (('+' | '-') term)*
//   term       := unary (('*' | '/' | '@') unary)*
//   unary      := '-' unary | power
//   power      := postfix ['**' unary]
//   postfix    := primary ('.' NAME '(' [arg (',' arg)* [',']] ')')*
//   primary    := literal | NAME | '[' [expr (',' expr)* [',']] ']' | '(' expr ')'
//               | NAME '(' [arg (',' arg)* [',']] ')'
//   arg        := expr | NAME '=' expr                  keywords after positionals, as in Python
//   literal    := ['-'] (INT | FLOAT | IMAG) | STRING | True | False | None
// A call of "x.relu" where x is a variable is the method call x.relu() (the evaluator decides).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "opd/ivalue.h"

namespace opd::cli::eval {

struct Expr {
  // Binary: `name` is the operator ("+", "**", "<="), items its two operands. Negate: items[0].
  // Method: items[0] is the receiver, then the positional arguments; `name` is the method.
  enum class Kind { Literal, Name, List, Call, Binary, Negate, Method };
  Kind kind;
  size_t column;                         // where the expression starts, for error messages
  IValue literal;                        // Literal: int, float, complex, bool, str or None
  std::string name;                      // Name; Call: the callee as written
  std::vector<Expr> items;               // List: elements; Call: positional arguments
  std::vector<std::string> kwarg_names;  // Call: keyword names, parallel to kwarg_values
  std::vector<Expr> kwarg_values;
};

struct Statement {
  std::string target;  // empty for an expression statement
  Expr expr;
};

struct Program {
  std::string text;
  std::vector<Statement> statements;  // never empty
};

// How deeply lists, calls and operators may nest: `[[1]]` and `f(g(1))` are two levels,
// `f([1])` two, `x + y + z` two, `-(-x)` two. Python's parser stops at 200 nested brackets too.
// Everything that walks an Expr (the evaluator, tensor literals, the printers, ~Expr) recurses over
// it, so this limit is what keeps a hostile program from overflowing the stack.
inline constexpr int kMaxNesting = 200;

// Throws opd::ValueError with the column and a caret on a syntax error, for a program
// without any statement, and for lists, calls and operators nested more than kMaxNesting deep
// ("opd eval: too deeply nested (...) at column N", the column of the first bracket or
// operator past the limit).
Program parse_program(std::string_view text);

}  // namespace opd::cli::eval
