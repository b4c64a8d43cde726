#pragma once

// Reading schema text, shared by schema_parser.cpp (the grammar), schema_lexer.cpp (tokens) and
// schema_defaults.cpp (default values). Private to the core.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "opd/function_schema.h"

namespace opd::detail {

enum class TokenKind {
  Ident,        // [A-Za-z_][A-Za-z0-9_]*; True, False and None are identifiers too
  Number,       // 1, 1.5, 1., .5, 1e-05, 2j (the parser decides what it means)
  String,       // '...' or "..."; `value` holds the decoded contents
  FreshSet,     // $0: the name printed for a fresh alias set ("Tensor!")
  Arrow,        // ->
  Ellipsis,     // ...
  DoubleColon,  // ::
  Punct,        // any other single byte: ( ) [ ] , = ? ! * | . - + and invalid bytes
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;  // as written
  std::string value;      // String only: the decoded contents
  int column = 0;         // 1-based byte offset into the schema text

  bool is(char c) const { return kind == TokenKind::Punct && text.size() == 1 && text[0] == c; }
  bool is_ident(std::string_view s) const { return kind == TokenKind::Ident && text == s; }
  // For messages: 'x' (quoted, truncated, unprintable bytes escaped) or "end of input".
  std::string describe() const;
};

// Splits schema text into tokens on demand, so that the first error in reading order is the one
// reported. Throws SchemaParseError for malformed string literals.
class SchemaLexer {
 public:
  explicit SchemaLexer(std::string_view text) : text_(text) {}

  // The token `ahead` positions past the current one, without consuming anything.
  const Token& peek(std::size_t ahead = 0);
  // Consumes and returns the current token.
  Token next();

  std::string_view text() const { return text_; }

 private:
  Token lex_one();
  Token lex_number(std::size_t start);
  Token lex_string(std::size_t start);

  std::string_view text_;
  std::size_t pos_ = 0;
  // Look-ahead ring: the parser never peeks more than one token past the next. An array, not a
  // deque, so that parsing a schema costs no allocation for it.
  static constexpr std::size_t kLookahead = 2;
  std::array<Token, kLookahead> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

// Throws SchemaParseError "<expected> but found <found> at column <found.column>" about `text`.
[[noreturn]] void fail_at(const Token& found, const std::string& expected, std::string_view text);

// Reads the default value of argument `arg` of type `type` (with list size N, if any) from the
// lexer's current token on, and checks that the type takes it. Throws SchemaParseError.
DefaultValue read_default_value(SchemaLexer& lex, const Type& type, std::optional<int64_t> N,
                                const std::string& arg);

}  // namespace opd::detail
