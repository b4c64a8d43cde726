#include "formula_text.h"

#include <cctype>

namespace opd::gen {
namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

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
