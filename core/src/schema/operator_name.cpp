#include "opd/operator_name.h"

#include <ostream>

namespace opd {

namespace {

// The problem, the column, then the text with a caret under the column. Whitespace control
// characters are shown as spaces so that the caret stays aligned.
std::string format_parse_error(const std::string& problem, int column, std::string_view text) {
  std::string shown(text);
  for (char& c : shown) {
    if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') c = ' ';
  }
  std::string caret(static_cast<std::size_t>(column > 0 ? column - 1 : 0), ' ');
  return fmt::format("{} at column {}\n  {}\n  {}^", problem, column, shown, caret);
}

}  // namespace

SchemaParseError::SchemaParseError(const std::string& problem, int column, std::string_view text)
    : Error(format_parse_error(problem, column, text)), column_(column) {}

std::string OperatorName::to_string() const {
  return overload_name.empty() ? name : name + "." + overload_name;
}

std::ostream& operator<<(std::ostream& out, const OperatorName& name) {
  return out << name.to_string();
}

}  // namespace opd
