#pragma once

// Tokens of an `opd eval` program: a small Python-like expression language
// ("x = ones([2, 3]); add(x, x, alpha=2)").

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace opd::cli::eval {

enum class TokenKind {
  Name,    // add, aten::add.Tensor, torch.float64, True, None
  Int,     // 42
  Float,   // 1.5, 1., .5, 1e-3
  Imag,    // 2j, 1.5j (Python's imaginary literals)
  String,  // 'cpu', "meta" (text holds the value, escapes resolved)
  Punct,   // one of ( ) [ ] , = ; . and the operators + - * / @ ** == != < <= > >=
  End,
};

struct Token {
  TokenKind kind;
  std::string text;
  size_t column;  // 1-based, in the program text

  bool is(char c) const { return kind == TokenKind::Punct && text.size() == 1 && text[0] == c; }
  bool is(std::string_view op) const { return kind == TokenKind::Punct && text == op; }
};

// The tokens of `program`, ending with an End token. Throws opd::ValueError "opd eval: ... at
// column N" with the program and a caret for a character that starts no token or an
// unterminated string.
std::vector<Token> tokenize(std::string_view program);

// "<message> at column N\n  <program>\n  <caret>": the shape of every syntax error. The program
// is shown with tabs, newlines and the other whitespace controls as spaces, so that the caret
// stays under column N and the message keeps its three lines (as the schema parser's).
// REQUIRES: `message` has no newline (see quoted_for_message).
[[noreturn]] void throw_syntax_error(std::string_view program, size_t column,
                                     const std::string& message);

// `text` in single quotes for one line of an error message: a backslash, a quote and control
// characters escaped as Python's repr does ('a\nb', '\x01'); other bytes as they are.
std::string quoted_for_message(std::string_view text);

}  // namespace opd::cli::eval
