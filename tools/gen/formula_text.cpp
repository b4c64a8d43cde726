#include "formula_text.h"

#include <fmt/format.h>

#include <cctype>
#include <string>
#include <vector>

namespace opd::gen {
namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// C++20's keywords and alternative tokens ([lex.key], [lex.digraph]).
constexpr std::string_view kKeywords[] = {"alignas",       "alignof",     "and",
                                          "and_eq",        "asm",         "auto",
                                          "bitand",        "bitor",       "bool",
                                          "break",         "case",        "catch",
                                          "char",          "char16_t",    "char32_t",
                                          "char8_t",       "class",       "co_await",
                                          "co_return",     "co_yield",    "compl",
                                          "concept",       "const",       "const_cast",
                                          "consteval",     "constexpr",   "constinit",
                                          "continue",      "decltype",    "default",
                                          "delete",        "do",          "double",
                                          "dynamic_cast",  "else",        "enum",
                                          "explicit",      "export",      "extern",
                                          "false",         "float",       "for",
                                          "friend",        "goto",        "if",
                                          "inline",        "int",         "long",
                                          "mutable",       "namespace",   "new",
                                          "noexcept",      "not",         "not_eq",
                                          "nullptr",       "operator",    "or",
                                          "or_eq",         "private",     "protected",
                                          "public",        "register",    "reinterpret_cast",
                                          "requires",      "return",      "short",
                                          "signed",        "sizeof",      "static",
                                          "static_assert", "static_cast", "struct",
                                          "switch",        "template",    "this",
                                          "thread_local",  "throw",       "true",
                                          "try",           "typedef",     "typeid",
                                          "typename",      "union",       "unsigned",
                                          "using",         "virtual",     "void",
                                          "volatile",      "wchar_t",     "while",
                                          "xor",           "xor_eq"};

// The bracket a digraph at `at` stands for ('<%' is '{'), '#' for "%:", or 0 when none starts
// there. "<::" followed by neither ':' nor '>' is '<' then "::" ([lex.pptoken]).
char digraph_at(std::string_view text, size_t at) {
  const std::string_view rest = text.substr(at);
  if (rest.starts_with("<%")) return '{';
  if (rest.starts_with("%>")) return '}';
  if (rest.starts_with("%:")) return '#';
  if (rest.starts_with(":>")) return ']';
  if (rest.starts_with("<:")) {
    const bool template_scope =
        rest.starts_with("<::") && rest.size() > 3 && rest[3] != ':' && rest[3] != '>';
    return template_scope ? 0 : '[';
  }
  return 0;
}

}  // namespace

bool is_cpp_keyword(std::string_view word) {
  for (std::string_view k : kKeywords) {
    if (k == word) return true;
  }
  return false;
}

bool is_cpp_identifier(std::string_view word) {
  if (word.empty() || std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  for (char c : word) {
    if (!is_ident_char(c) || static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return !is_cpp_keyword(word);
}

std::string formula_problem(std::string_view formula) {
  if (formula.find_first_not_of(' ') == std::string_view::npos) return "it is empty";
  for (size_t i = 0; i < formula.size(); ++i) {
    const auto c = static_cast<unsigned char>(formula[i]);
    const size_t column = i + 1;
    if (c < 0x20 || c >= 0x7f) {
      return fmt::format(
          "it holds byte 0x{:02x} at column {} (a formula is one line of printable ASCII)", c,
          column);
    }
    if (c == ';')
      return fmt::format("it holds ';' at column {} (a formula is one expression)", column);
    if (c == '#') return fmt::format("it holds '#' at column {}", column);
    if (c == '\\') return fmt::format("it holds '\\' at column {}", column);
    if (c == '"' || c == '\'') {
      return fmt::format("it holds {} at column {} (no string or character literals)",
                         c == '"' ? "'\"'" : "\"'\"", column);
    }
  }
  std::vector<std::pair<char, size_t>> open;  // bracket, column
  for (size_t i = 0; i < formula.size(); ++i) {
    const size_t column = i + 1;
    if (formula.substr(i).starts_with("//")) {
      return fmt::format("it holds a line comment at column {} (use /* */)", column);
    }
    if (formula.substr(i).starts_with("/*")) {
      const size_t end = formula.find("*/", i + 2);
      if (end == std::string_view::npos) {
        return fmt::format("the comment at column {} is not closed", column);
      }
      i = end + 1;
      continue;
    }
    char c = formula[i];
    if (const char d = digraph_at(formula, i)) {
      return fmt::format("it holds the digraph '{}' at column {} (write '{}')",
                         formula.substr(i, 2), column, d);
    }
    if (c == '(' || c == '[' || c == '{') {
      open.emplace_back(c, column);
    } else if (c == ')' || c == ']' || c == '}') {
      const char want = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (open.empty()) return fmt::format("its '{}' at column {} has no '{}'", c, column, want);
      if (open.back().first != want) {
        return fmt::format("its '{}' at column {} closes the '{}' at column {}", c, column,
                           open.back().first, open.back().second);
      }
      open.pop_back();
    }
  }
  if (!open.empty()) {
    return fmt::format("its '{}' at column {} is not closed", open.back().first,
                       open.back().second);
  }
  return "";
}

std::string replace_word(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t at = text.find(from, i);
    if (at == std::string::npos) break;
    bool left = at == 0 || !is_ident_char(text[at - 1]);
    bool right = at + from.size() >= text.size() || !is_ident_char(text[at + from.size()]);
    out += text.substr(i, at - i);
    out += left && right ? to : from;
    i = at + from.size();
  }
  return out + text.substr(i);
}

std::set<std::string> variables(const std::string& text) {
  std::set<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (!is_ident_char(text[i]) || std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_ident_char(text[j])) ++j;
    size_t k = i;
    while (k > 0 && text[k - 1] == ' ') --k;
    bool member = k > 0 && (text[k - 1] == '.' || text[k - 1] == ':' || text[k - 1] == '>');
    if (!member) out.insert(text.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace opd::gen
