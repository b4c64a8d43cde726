#include "eval_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "eval_operators.h"
#include "opd/bind/tensor_values.h"
#include "opd/error.h"
#include "opd/layout.h"

namespace opd::cli::eval {

using bind::BoundCall;
using bind::Value;

std::optional<IValue> constant_named(std::string_view name) {
  if (name == "inf") return IValue(std::numeric_limits<double>::infinity());
  if (name == "nan") return IValue(std::numeric_limits<double>::quiet_NaN());
  try {
    return IValue(parse_scalar_type(name));
  } catch (const ValueError&) {
  }
  try {
    return IValue(parse_layout(name));
  } catch (const ValueError&) {
  }
  try {
    return IValue(parse_memory_format(name));
  } catch (const ValueError&) {
  }
  return std::nullopt;
}

namespace {

// Lists and tuples nesting in `v`, counted up to one past `limit`.
int nesting_of(const IValue& v, int limit) {
  if (!v.is_generic_list() && !v.is_tuple()) return 0;
  if (limit < 0) return 1;
  int inner = 0;
  for (const IValue& x : v.is_tuple() ? v.to_tuple() : v.to_generic_list()) {
    inner = std::max(inner, nesting_of(x, limit - 1));
    if (inner > limit - 1) break;
  }
  return 1 + inner;
}

}  // namespace

Value Evaluator::run(std::string_view text) {
  Program program = parse_program(text);
  Value last;
  for (const Statement& s : program.statements) {
    last = evaluate(s.expr);
    if (!s.target.empty()) variables_[s.target] = last;
  }
  return last;
}

Value Evaluator::evaluate(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Literal:
      return {e.literal, {}, {}};
    case Expr::Kind::Name: {
      if (auto it = variables_.find(e.name); it != variables_.end()) return it->second;
      if (auto c = constant_named(e.name)) return {*c, {}, {}};
      throw ValueError(fmt::format("opd eval: name '{}' is not defined", e.name));
    }
    case Expr::Kind::List: {
      std::vector<IValue> items;
      int inner = 0;
      for (const Expr& x : e.items) {
        Value item = evaluate(x);
        inner = std::max(inner, item.nesting);
        items.push_back(std::move(item.value));
      }
      // The parser bounds the nesting of the tree; a variable can still hold a list nested
      // to the limit, and printing and freeing a value recurse over it as well.
      if (inner + 1 > kMaxNesting) {
        throw ValueError(
            fmt::format("opd eval: too deeply nested (more than {} levels of lists) at column {}",
                        kMaxNesting, e.column));
      }
      Value out{IValue::make_generic_list(std::move(items)), {}, {}};
      out.nesting = inner + 1;
      return out;
    }
    case Expr::Kind::Call:
    case Expr::Kind::Method:
      return call(e);
    case Expr::Kind::Binary: {
      Value lhs = evaluate(e.items[0]);
      Value rhs = evaluate(e.items[1]);
      return {apply_binary(e.name, lhs.value, rhs.value), {}, {}};
    }
    case Expr::Kind::Negate:
      return {apply_negation(evaluate(e.items[0]).value), {}, {}};
  }
  return {};
}

Value Evaluator::call(const Expr& e) {
  std::vector<IValue> positional;
  for (const Expr& x : e.items) positional.push_back(evaluate(x).value);
  // A method call: `mm(y, y).sum()`, or `x.relu()` (one name token) where x is a variable. The
  // receiver binds as the operator's first argument, as torch's Tensor methods do.
  std::string name = e.name;
  if (e.kind == Expr::Kind::Call) {
    if (size_t dot = name.find('.');
        dot != std::string::npos && name.find("::") == std::string::npos) {
      if (auto it = variables_.find(std::string_view(name).substr(0, dot));
          it != variables_.end()) {
        positional.insert(positional.begin(), it->second.value);
        name = name.substr(dot + 1);
        OPD_CHECK_T(ValueError, name.find('.') == std::string::npos,
                    "opd eval: '{}' is not a method call (write {}.{}() with one name after the "
                    "variable)",
                    e.name, it->first, name.substr(0, name.find('.')));
        OPD_CHECK_T(TypeError, positional[0].is_tensor(), "opd eval: '{}' has no method '{}'",
                    bind::python_type_name(positional[0]), name);
      }
    }
  } else {
    OPD_CHECK_T(TypeError, positional[0].is_tensor(), "opd eval: '{}' has no method '{}'",
                bind::python_type_name(positional[0]), name);
  }
  std::vector<std::pair<std::string, IValue>> keywords;
  for (size_t i = 0; i < e.kwarg_names.size(); ++i) {
    keywords.emplace_back(e.kwarg_names[i], evaluate(e.kwarg_values[i]).value);
  }
  if (e.kind == Expr::Kind::Call && (name == "tensor" || name == "torch.tensor")) {
    return tensor_literal(e, std::move(positional), std::move(keywords));
  }
  BoundCall bound = bind::bind_call(name, {std::move(positional), std::move(keywords)}, defaults_);
  try {
    bound.op.call_boxed(&bound.stack);
  } catch (const std::exception&) {
    throw;
  } catch (...) {
    // A kernel may throw anything (`throw 42`); name the operator rather than let it terminate
    // the program or reach the caller as something it cannot print.
    throw Error(fmt::format("{}: a kernel threw an exception that is not a std::exception",
                            bound.op.operator_name().to_string()));
  }
  Value out;
  if (bound.stack.size() == 1) {
    out.value = std::move(bound.stack[0]);
  } else if (!bound.stack.empty()) {
    out.value = IValue::make_tuple(std::move(bound.stack));
    // Named returns print as torch.return_types.<name>, as PyTorch's struct sequences.
    const FunctionSchema& s = *bound.schema;
    bool named = s.returns().size() == out.value.to_tuple().size();
    for (const Argument& r : s.returns()) named = named && !r.name().empty();
    if (named) {
      const std::string& full = s.name();
      out.struct_name = full.substr(full.find("::") == std::string::npos ? 0 : full.find("::") + 2);
      for (const Argument& r : s.returns()) out.field_names.push_back(r.name());
    }
  }
  out.nesting = nesting_of(out.value, kMaxNesting);
  return out;
}

Value Evaluator::tensor_literal(const Expr& e, std::vector<IValue> positional,
                                std::vector<std::pair<std::string, IValue>> keywords) {
  OPD_CHECK_T(TypeError, positional.size() == 1,
              "tensor() takes 1 positional argument (data) but {} were given", positional.size());
  std::optional<ScalarType> dtype = defaults_.dtype;
  std::optional<Device> device = defaults_.device;
  static const auto dtype_type = Type::optional_of(Type::get(TypeKind::ScalarType));
  static const auto device_type = Type::optional_of(Type::get(TypeKind::Device));
  for (const auto& [name, value] : keywords) {
    if (name == "dtype") {
      auto v = bind::convert_argument(value, *dtype_type, std::nullopt);
      OPD_CHECK_T(TypeError, v.has_value(),
                  "tensor(): argument 'dtype' must be torch.dtype, not {}",
                  bind::python_type_name(value));
      if (!v->is_none()) dtype = v->to_scalar_type();
    } else if (name == "device") {
      auto v = bind::convert_argument(value, *device_type, std::nullopt);
      OPD_CHECK_T(TypeError, v.has_value(),
                  "tensor(): argument 'device' must be torch.device, not {}",
                  bind::python_type_name(value));
      if (!v->is_none()) device = v->to_device();
    } else {
      throw TypeError(fmt::format("tensor() got an unexpected keyword argument '{}'", name));
    }
  }
  return {IValue(bind::make_tensor_literal(positional[0], dtype, device)), {}, {}};
}

}  // namespace opd::cli::eval
