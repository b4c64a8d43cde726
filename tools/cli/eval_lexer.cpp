#include "eval_lexer.h"

#include <fmt/format.h>

#include <cctype>

#include "opd/error.h"
#include "opd/quoting.h"

namespace opd::cli::eval {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ == text_.size()) break;
      char c = text_[pos_];
      if (is_name_start(c)) {
        out.push_back(name());
      } else if (is_digit(c) ||
                 (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
        out.push_back(number());
      } else if (c == '\'' || c == '"') {
        out.push_back(string());
      } else if (size_t n = operator_length(); n > 0) {
        out.push_back({TokenKind::Punct, std::string(text_.substr(pos_, n)), pos_ + 1});
        pos_ += n;
      } else {
        throw_syntax_error(text_, pos_ + 1,
                           "opd eval: unexpected character " + quoted_for_message({&c, 1}));
      }
    }
    out.push_back({TokenKind::End, "", text_.size() + 1});
    return out;
  }

 private:
  // The length of the punctuation or operator at pos_, 0 if none: ** == != <= >= before the
  // one-character ones.
  size_t operator_length() const {
    std::string_view rest = text_.substr(pos_);
    for (std::string_view two : {"**", "==", "!=", "<=", ">="}) {
      if (rest.starts_with(two)) return 2;
    }
    return std::string_view("()[],=;-+*/@<>.").find(rest[0]) != std::string_view::npos ? 1 : 0;
  }

  // Segments joined by "::" or "." form one name: aten::add.Tensor, torch.float64.
  Token name() {
    size_t start = pos_;
    while (true) {
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      if (joins(".", 1) || joins("::", 2)) continue;
      break;
    }
    return {TokenKind::Name, std::string(text_.substr(start, pos_ - start)), start + 1};
  }
  bool joins(std::string_view sep, size_t n) {
    if (text_.substr(pos_, n) != sep || pos_ + n >= text_.size() || !is_name_start(text_[pos_ + n]))
      return false;
    pos_ += n;
    return true;
  }

  Token number() {
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
      if (e < text_.size() && is_digit(text_[e])) {
        is_float = true;
        pos_ = e;
        while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
      }
    }
    TokenKind kind = is_float ? TokenKind::Float : TokenKind::Int;
    std::string digits(text_.substr(start, pos_ - start));
    if (pos_ < text_.size() && (text_[pos_] == 'j' || text_[pos_] == 'J')) {
      kind = TokenKind::Imag;
      ++pos_;
    }
    if (pos_ < text_.size() && is_name_char(text_[pos_])) {
      throw_syntax_error(text_, start + 1, "opd eval: invalid number");
    }
    return {kind, digits, start + 1};
  }

  Token string() {
    size_t start = pos_;
    char quote = text_[pos_++];
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        switch (e) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          default:
            value += e;  // \\, \', \" and anything else stand for themselves
        }
      } else {
        value += c;
      }
    }
    if (pos_ == text_.size()) {
      throw_syntax_error(text_, start + 1, "opd eval: unterminated string");
    }
    ++pos_;
    return {TokenKind::String, value, start + 1};
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

void throw_syntax_error(std::string_view program, size_t column, const std::string& message) {
  std::string shown(program);
  for (char& c : shown) {
    if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') c = ' ';
  }
  throw ValueError(fmt::format("{} at column {}\n  {}\n  {}^", message, column, shown,
                               std::string(column - 1, ' ')));
}

std::string quoted_for_message(std::string_view text) {
  return quote(text, QuoteStyle::kPythonSingleQuoted);
}

std::vector<Token> tokenize(std::string_view program) { return Lexer(program).run(); }

}  // namespace opd::cli::eval
