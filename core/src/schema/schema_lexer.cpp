#include "schema/schema_lexer.h"

#include <fmt/format.h>

#include "opd/operator_name.h"

namespace opd::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int hex_digit(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Token::describe() const {
  if (kind == TokenKind::End) return "end of input";
  constexpr std::size_t kMaxShown = 24;
  std::string shown;
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    shown += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c))
                                     : fmt::format("\\x{:02x}", c);
  }
  if (text.size() > kMaxShown) shown += "...";
  return "'" + shown + "'";
}

void fail_at(const Token& found, const std::string& expected, std::string_view text) {
  throw SchemaParseError(expected + " but found " + found.describe(), found.column, text);
}

const Token& SchemaLexer::peek(std::size_t ahead) {
  OPD_INTERNAL_ASSERT(ahead < kLookahead, "schema lexer: look-ahead of {} tokens", ahead + 1);
  while (count_ <= ahead) {
    ring_[(head_ + count_) % kLookahead] = lex_one();
    ++count_;
  }
  return ring_[(head_ + ahead) % kLookahead];
}

Token SchemaLexer::next() {
  peek();
  Token t = std::move(ring_[head_]);
  head_ = (head_ + 1) % kLookahead;
  --count_;
  return t;
}

Token SchemaLexer::lex_one() {
  while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  Token t;
  t.column = static_cast<int>(pos_) + 1;
  if (pos_ >= text_.size()) return t;  // End; never advances further

  std::size_t start = pos_;
  char c = text_[pos_];
  auto rest = text_.substr(pos_);
  if (is_ident_start(c)) {
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    t.kind = TokenKind::Ident;
  } else if (is_digit(c) || (c == '.' && rest.size() > 1 && is_digit(rest[1]))) {
    return lex_number(start);
  } else if (c == '\'' || c == '"') {
    return lex_string(start);
  } else if (c == '$' && rest.size() > 1 && is_digit(rest[1])) {
    ++pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    t.kind = TokenKind::FreshSet;
  } else if (rest.starts_with("->")) {
    pos_ += 2;
    t.kind = TokenKind::Arrow;
  } else if (rest.starts_with("...")) {
    pos_ += 3;
    t.kind = TokenKind::Ellipsis;
  } else if (rest.starts_with("::")) {
    pos_ += 2;
    t.kind = TokenKind::DoubleColon;
  } else {
    ++pos_;
    t.kind = TokenKind::Punct;
  }
  t.text = text_.substr(start, pos_ - start);
  return t;
}

// digits ['.' digits] [('e'|'E') ['+'|'-'] digits] ['j'], or the same starting at '.'. What the
// digits mean (int, float, imaginary) is the parser's business.
Token SchemaLexer::lex_number(std::size_t start) {
  auto digits = [&] {
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
  };
  digits();
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    digits();
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    std::size_t exponent = pos_ + 1;
    if (exponent < text_.size() && (text_[exponent] == '+' || text_[exponent] == '-')) ++exponent;
    if (exponent < text_.size() && is_digit(text_[exponent])) {
      pos_ = exponent;
      digits();
    }
  }
  if (pos_ < text_.size() && text_[pos_] == 'j') ++pos_;
  Token t;
  t.kind = TokenKind::Number;
  t.column = static_cast<int>(start) + 1;
  t.text = text_.substr(start, pos_ - start);
  return t;
}

// A single- or double-quoted literal on one line, with C escapes: \\ \' \" \a \b \f \n \r \t \v,
// \xHH and octal \o, \oo, \ooo (at most \377).
Token SchemaLexer::lex_string(std::size_t start) {
  const char quote = text_[start];
  Token t;
  t.kind = TokenKind::String;
  t.column = static_cast<int>(start) + 1;
  pos_ = start + 1;
  // `at` is where the problem is; what is shown as found is the escape sequence there.
  auto fail = [&](std::size_t at, const std::string& problem) {
    Token found;
    found.kind = TokenKind::Punct;
    found.text = text_.substr(at, std::min<std::size_t>(2, text_.size() - at));
    throw SchemaParseError(problem + " but found " + found.describe(), static_cast<int>(at) + 1,
                           text_);
  };
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n' || text_[pos_] == '\r') {
      throw SchemaParseError(
          fmt::format("Expected a closing {} for the string starting at column {} but found {}",
                      quote, start + 1, pos_ >= text_.size() ? "end of input" : "end of line"),
          static_cast<int>(pos_) + 1, text_);
    }
    char c = text_[pos_];
    if (c == quote) break;
    if (c != '\\') {
      t.value += c;
      ++pos_;
      continue;
    }
    std::size_t escape = pos_;
    char e = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
    pos_ += 2;
    switch (e) {
      case '\\':
      case '\'':
      case '"':
        t.value += e;
        break;
      case 'a':
        t.value += '\a';
        break;
      case 'b':
        t.value += '\b';
        break;
      case 'f':
        t.value += '\f';
        break;
      case 'n':
        t.value += '\n';
        break;
      case 'r':
        t.value += '\r';
        break;
      case 't':
        t.value += '\t';
        break;
      case 'v':
        t.value += '\v';
        break;
      case 'x': {
        int hi = pos_ < text_.size() ? hex_digit(text_[pos_]) : -1;
        int lo = pos_ + 1 < text_.size() ? hex_digit(text_[pos_ + 1]) : -1;
        if (hi < 0 || lo < 0) fail(escape, "Expected two hex digits after \\x");
        t.value += static_cast<char>(hi * 16 + lo);
        pos_ += 2;
        break;
      }
      default: {
        if (e < '0' || e > '7') {
          fail(escape,
               "Expected an escape sequence (\\n, \\t, \\\\, \\', \\\", \\x41, \\101, ...)");
        }
        int value = e - '0';
        for (int i = 0; i < 2 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7';
             ++i) {
          value = value * 8 + (text_[pos_++] - '0');
        }
        if (value > 0377) fail(escape, "Expected an octal escape of at most \\377");
        t.value += static_cast<char>(value);
      }
    }
  }
  ++pos_;  // closing quote
  t.text = text_.substr(start, pos_ - start);
  return t;
}

}  // namespace opd::detail
