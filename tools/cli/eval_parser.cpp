#include "eval_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <complex>
#include <cstdlib>
#include <initializer_list>

#include "eval_lexer.h"
#include "opd/error.h"

namespace opd::cli::eval {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(tokenize(text)) {}

  Program run() {
    Program p{std::string(text_), {}};
    while (true) {
      if (!peek().is(';') && peek().kind != TokenKind::End) p.statements.push_back(statement());
      if (peek().kind == TokenKind::End) break;
      expect(';', "';' between statements");
    }
    if (p.statements.empty()) fail(peek(), "opd eval: the program has no statement");
    return p;
  }

 private:
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    throw_syntax_error(text_, at.column, message);
  }
  void expect(char c, const char* what) {
    const Token& t = peek();
    if (!t.is(c)) {
      fail(t, fmt::format("opd eval: expected {} but found {}", what, describe(t)));
    }
    next();
  }
  // Entering a list or a call's arguments at the bracket `at`. See kMaxNesting.
  void enter(const Token& at) {
    if (++depth_ > kMaxNesting) {
      fail(at, fmt::format("opd eval: too deeply nested (more than {} levels of lists, calls "
                           "and operators)",
                           kMaxNesting));
    }
  }
  void leave() { --depth_; }

  static std::string describe(const Token& t) {
    return t.kind == TokenKind::End ? std::string("the end of the program")
                                    : quoted_for_message(t.text);
  }

  Statement statement() {
    if (peek().kind == TokenKind::Name && peek(1).is('=')) {
      std::string target = next().text;
      next();
      return {std::move(target), expr()};
    }
    return {"", expr()};
  }

  // Operators nest as lists and calls do (kMaxNesting): `1 + 1 + ... + 1` is a tree as deep
  // as it is long, and everything that walks a tree recurses over it.
  static Expr binary(std::string op, Expr lhs, Expr rhs) {
    Expr e{Expr::Kind::Binary, lhs.column, {}, std::move(op), {}, {}, {}};
    e.items.push_back(std::move(lhs));
    e.items.push_back(std::move(rhs));
    return e;
  }

  Expr expr() {
    Expr lhs = additive();
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!peek().is(op)) continue;
      const Token& at = next();
      enter(at);
      Expr rhs = additive();
      leave();
      for (std::string_view again : {"==", "!=", "<=", ">=", "<", ">"}) {
        if (peek().is(again)) fail(peek(), "opd eval: chained comparisons are not supported");
      }
      return binary(std::string(op), std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  // A left-associative chain: each operator adds one level over its left operand.
  template <class Operand>
  Expr chain(std::initializer_list<std::string_view> ops, Operand operand) {
    Expr lhs = operand();
    int levels = 0;
    while (true) {
      auto op =
          std::find_if(ops.begin(), ops.end(), [&](std::string_view o) { return peek().is(o); });
      if (op == ops.end()) break;
      const Token& at = next();
      enter(at);
      ++levels;
      lhs = binary(std::string(*op), std::move(lhs), operand());
    }
    depth_ -= levels;
    return lhs;
  }

  Expr additive() {
    return chain({"+", "-"}, [this] { return term(); });
  }
  Expr term() {
    return chain({"*", "/", "@"}, [this] { return unary(); });
  }

  Expr unary() {
    const Token& t = peek();
    if (t.is('-')) {
      const Token& n = peek(1);
      bool number = n.kind == TokenKind::Int || n.kind == TokenKind::Float ||
                    n.kind == TokenKind::Imag ||
                    (n.kind == TokenKind::Name && (n.text == "inf" || n.text == "nan"));
      // A negative literal (-1, -9223372036854775808, -inf) unless a power follows (-2 ** 2 is
      // -(2 ** 2) in Python).
      if (number && !peek(2).is("**")) return power();
      next();
      enter(t);
      Expr operand = unary();
      leave();
      Expr e{Expr::Kind::Negate, t.column, {}, "-", {}, {}, {}};
      e.items.push_back(std::move(operand));
      return e;
    }
    return power();
  }

  Expr power() {
    Expr base = postfix();
    if (!peek().is("**")) return base;
    const Token& at = next();
    enter(at);
    Expr exponent = unary();
    leave();
    return binary("**", std::move(base), std::move(exponent));
  }

  Expr postfix() {
    Expr e = primary();
    int levels = 0;
    while (peek().is('.')) {
      const Token& dot = next();
      const Token& name = peek();
      if (name.kind != TokenKind::Name) {
        fail(name, fmt::format("opd eval: expected a method name after '.' but found {}",
                               describe(name)));
      }
      next();
      if (!peek().is('(')) {
        fail(peek(), fmt::format("opd eval: expected '(' after the method name '{}'", name.text));
      }
      enter(dot);
      ++levels;
      Expr call = arguments(name, Expr::Kind::Method);
      call.items.insert(call.items.begin(), std::move(e));
      e = std::move(call);
    }
    depth_ -= levels;
    return e;
  }

  Expr primary() {
    const Token& t = peek();
    if (t.is('-')) {
      next();
      const Token& n = peek();
      if (n.kind == TokenKind::Name && (n.text == "inf" || n.text == "nan")) {
        next();
        return literal(IValue(-std::strtod(n.text.c_str(), nullptr)), t.column);
      }
      return number(next(), /*negative=*/true, t.column);
    }
    switch (t.kind) {
      case TokenKind::Int:
      case TokenKind::Float:
      case TokenKind::Imag:
        return number(next(), false, t.column);
      case TokenKind::String:
        return literal(IValue(next().text), t.column);
      case TokenKind::Name:
        return name_or_call();
      default:
        break;
    }
    if (t.is('[')) return list();
    if (t.is('(')) {
      enter(t);
      next();
      Expr inner = expr();
      expect(')', "')'");
      leave();
      return inner;
    }
    fail(t, fmt::format("opd eval: expected an expression but found {}", describe(t)));
  }

  static Expr literal(IValue v, size_t column) {
    Expr e{Expr::Kind::Literal, column, std::move(v), {}, {}, {}, {}};
    return e;
  }

  Expr number(const Token& t, bool negative, size_t column) {
    const std::string& s = t.text;
    if (t.kind == TokenKind::Int) {
      // Parse the magnitude as unsigned so that -9223372036854775808 fits.
      uint64_t magnitude = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude);
      uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
      if (ec != std::errc() || end != s.data() + s.size() || magnitude > limit) {
        fail(t, "opd eval: integer literal out of the int64 range");
      }
      int64_t v = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      return literal(IValue(v), column);
    }
    double v = std::strtod(s.c_str(), nullptr);
    if (negative) v = -v;
    if (t.kind == TokenKind::Imag) return literal(IValue(std::complex<double>(0, v)), column);
    return literal(IValue(v), column);
  }

  Expr list() {
    enter(peek());
    size_t column = next().column;  // '['
    Expr e{Expr::Kind::List, column, {}, {}, {}, {}, {}};
    while (!peek().is(']')) {
      e.items.push_back(expr());
      if (peek().is(']')) break;
      expect(',', "',' or ']'");
    }
    next();
    leave();
    return e;
  }

  Expr name_or_call() {
    const Token& t = next();
    if (!peek().is('(')) {
      if (t.text == "True" || t.text == "False") return literal(IValue(t.text == "True"), t.column);
      if (t.text == "None") return literal(IValue(), t.column);
      return Expr{Expr::Kind::Name, t.column, {}, t.text, {}, {}, {}};
    }
    enter(peek());
    Expr call = arguments(t, Expr::Kind::Call);
    leave();
    return call;
  }

  // '(' args ')' of a call or method call named by `name`. REQUIRES: peek() is '('.
  Expr arguments(const Token& name, Expr::Kind kind) {
    next();  // '('
    Expr call{kind, name.column, {}, name.text, {}, {}, {}};
    while (!peek().is(')')) {
      if (peek().kind == TokenKind::Name && peek(1).is('=')) {
        const Token& key = next();
        next();
        for (const auto& k : call.kwarg_names) {
          if (k == key.text) fail(key, fmt::format("opd eval: keyword argument repeated: {}", k));
        }
        call.kwarg_names.push_back(key.text);
        call.kwarg_values.push_back(expr());
      } else {
        if (!call.kwarg_names.empty()) {
          fail(peek(), "opd eval: positional argument follows keyword argument");
        }
        call.items.push_back(expr());
      }
      if (peek().is(')')) break;
      expect(',', "',' or ')'");
    }
    next();
    return call;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;  // lists and calls open at pos_
};

}  // namespace

Program parse_program(std::string_view text) { return Parser(text).run(); }

}  // namespace opd::cli::eval
