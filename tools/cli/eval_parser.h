#pragma once

// The syntax tree of an `opd eval` program:
//   program   := statement (';' statement)*          empty statements are allowed
//   statement := NAME '=' expr | expr
//   expr      := literal | NAME | '[' [expr (',' expr)* [',']] ']'
//              | NAME '(' [arg (',' arg)* [',']] ')'
//   arg       := expr | NAME '=' expr                  keywords after positionals, as in Python
//   literal   := ['-'] (INT | FLOAT | IMAG) | STRING | True | False | None

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "opd/ivalue.h"

namespace opd::cli::eval {

struct Expr {
  enum class Kind { Literal, Name, List, Call };
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

// Throws opd::ValueError with the column and a caret on a syntax error, and for a program
// without any statement.
Program parse_program(std::string_view text);

}  // namespace opd::cli::eval
