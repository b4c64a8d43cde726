#pragma once

// Running an `opd eval` program: statements in order, variables, literals, tensor literals and
// operator calls (bound by opd::bind, called boxed through the dispatcher).

#include <map>
#include <string>
#include <string_view>

#include "eval_parser.h"
#include "opd/bind/binding.h"
#include "opd/bind/print.h"

namespace opd::cli::eval {

// Names that evaluate to constants when no variable has them: dtype names (float64, long,
// torch.float64...), layouts (strided), memory formats (contiguous_format), inf and nan.
std::optional<IValue> constant_named(std::string_view name);

class Evaluator {
 public:
  explicit Evaluator(bind::FactoryDefaults defaults = {}) : defaults_(std::move(defaults)) {}

  // Runs every statement; returns the value of the last one (for an assignment, the value
  // assigned). Variables persist across calls. Throws opd::Error (and its subclasses) for
  // syntax errors, unknown names and operators, arguments no overload accepts, and whatever
  // the operators throw; the message says which. A kernel that throws something that is not a
  // std::exception becomes opd::Error "<operator>: a kernel threw an exception that is not a
  // std::exception".
  bind::Value run(std::string_view program);
  // REQUIRES: `e` nests lists and calls at most kMaxNesting deep, as parse_program ensures
  // (this recurses over the tree).
  bind::Value evaluate(const Expr& e);

 private:
  bind::Value call(const Expr& e);
  bind::Value tensor_literal(const Expr& e, std::vector<IValue> positional,
                             std::vector<std::pair<std::string, IValue>> keywords);

  bind::FactoryDefaults defaults_;
  std::map<std::string, bind::Value, std::less<>> variables_;
};

}  // namespace opd::cli::eval
