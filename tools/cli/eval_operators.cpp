#include "eval_operators.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>

#include "opd/bind/binding.h"
#include "opd/bind/tensor_values.h"
#include "opd/error.h"

namespace opd::cli::eval {
namespace {

struct OperatorInfo {
  std::string_view symbol;
  const char* aten;       // the operator `tensor op x` calls
  const char* reflected;  // what `number op tensor` calls with (tensor, number); null: wrapped
  bool wraps_numbers;     // a number operand is a wrapped number (the .Tensor overload)
};

// As torch/_tensor.py and python_variable_methods.cpp: __radd__ is add, __rmul__ mul, the
// reflected comparisons swap (2 < x is x > 2), __rsub__/__rtruediv__/__rpow__ wrap the number.
// Torch's Python signatures of add, sub, mul and div take only a Tensor `other` (a number
// becomes a wrapped number: `x + 1` records AddBackward0); pow and the comparisons have Scalar
// forms.
constexpr std::array<OperatorInfo, 12> kOperators = {{
    {"+", "aten::add", "aten::add", true},
    {"-", "aten::sub", nullptr, true},
    {"*", "aten::mul", "aten::mul", true},
    {"/", "aten::div", nullptr, true},
    {"**", "aten::pow", nullptr, false},
    {"@", "aten::matmul", nullptr, false},
    {"==", "aten::eq", "aten::eq", false},
    {"!=", "aten::ne", "aten::ne", false},
    {"<", "aten::lt", "aten::gt", false},
    {"<=", "aten::le", "aten::ge", false},
    {">", "aten::gt", "aten::lt", false},
    {">=", "aten::ge", "aten::le", false},
}};

IValue maybe_wrapped(const OperatorInfo& info, const IValue& v) {
  if (info.wraps_numbers && v.is_scalar()) return IValue(bind::wrapped_number(v.to_scalar()));
  return v;
}

IValue call(const char* name, IValue a, IValue b) {
  return bind::call_operator(name, {std::move(a), std::move(b)}, {});
}

bool is_real_number(const IValue& v) { return v.is_int() || v.is_bool() || v.is_double(); }

// Python's arithmetic on two ints (bools count as ints): exact, or OverflowError-like
// ValueError past int64 (Python's ints are unbounded; opd eval's are int64).
std::optional<IValue> int_arithmetic(std::string_view op, int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = false;
  if (op == "+") {
    overflow = __builtin_add_overflow(a, b, &r);
  } else if (op == "-") {
    overflow = __builtin_sub_overflow(a, b, &r);
  } else if (op == "*") {
    overflow = __builtin_mul_overflow(a, b, &r);
  } else if (op == "**" && b >= 0) {
    r = 1;
    for (int64_t i = 0; i < b && !overflow; ++i) overflow = __builtin_mul_overflow(r, a, &r);
  } else {
    return std::nullopt;  // '/' and negative powers are floats, as in Python
  }
  OPD_CHECK_T(ValueError, !overflow, "opd eval: {} {} {} is out of the int64 range", a, op, b);
  return IValue(r);
}

// Two real numbers, as Python computes them; nullopt for '@'.
std::optional<IValue> number_arithmetic(std::string_view op, const IValue& lhs, const IValue& rhs) {
  const bool ints = !lhs.is_double() && !rhs.is_double();
  const double a = lhs.to_scalar().to_double(), b = rhs.to_scalar().to_double();
  if (op == "==") return IValue(a == b);
  if (op == "!=") return IValue(a != b);
  if (op == "<") return IValue(a < b);
  if (op == "<=") return IValue(a <= b);
  if (op == ">") return IValue(a > b);
  if (op == ">=") return IValue(a >= b);
  if (ints) {
    if (auto r = int_arithmetic(op, lhs.to_scalar().to_int64(), rhs.to_scalar().to_int64())) {
      return r;
    }
  }
  if (op == "+") return IValue(a + b);
  if (op == "-") return IValue(a - b);
  if (op == "*") return IValue(a * b);
  if (op == "/") {
    OPD_CHECK_T(ValueError, b != 0, "opd eval: division by zero");
    return IValue(a / b);
  }
  if (op == "**") return IValue(std::pow(a, b));
  return std::nullopt;
}

}  // namespace

IValue apply_binary(std::string_view op, const IValue& lhs, const IValue& rhs) {
  const OperatorInfo* info = nullptr;
  for (const OperatorInfo& o : kOperators) {
    if (o.symbol == op) info = &o;
  }
  OPD_CHECK(info != nullptr, "opd eval: unknown operator '{}'", op);
  if (lhs.is_tensor()) return call(info->aten, lhs, maybe_wrapped(*info, rhs));
  if (rhs.is_tensor() && lhs.is_scalar() && op != "@") {
    if (info->reflected) return call(info->reflected, rhs, maybe_wrapped(*info, lhs));
    return call(info->aten, IValue(bind::wrapped_number(lhs.to_scalar())), rhs);
  }
  if (is_real_number(lhs) && is_real_number(rhs)) {
    if (auto r = number_arithmetic(op, lhs, rhs)) return *r;
  }
  throw TypeError(fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op,
                              bind::python_type_name(lhs), bind::python_type_name(rhs)));
}

IValue apply_negation(const IValue& v) {
  if (v.is_tensor()) return bind::call_operator("aten::neg", {v}, {});
  if (v.is_int()) {
    OPD_CHECK_T(ValueError, v.to_int() != std::numeric_limits<int64_t>::min(),
                "opd eval: -({}) is out of the int64 range", v.to_int());
    return IValue(-v.to_int());
  }
  if (v.is_double()) return IValue(-v.to_double());
  if (v.is_complex_double()) return IValue(-v.to_complex_double());
  if (v.is_bool()) return IValue(-static_cast<int64_t>(v.to_bool()));
  throw TypeError(fmt::format("bad operand type for unary -: '{}'", bind::python_type_name(v)));
}

}  // namespace opd::cli::eval
