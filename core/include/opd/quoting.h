#pragma once

// Strings printed as quoted literals, in the three places the project prints them: schema
// defaults, IValue reprs and opd eval's messages. Each style is read back by the schema lexer
// (core/src/schema/schema_lexer.cpp), whose string literals take every escape written here.
// Header-only, so that libopd_core.so and the opd command share it without an exported symbol.

#include <string>
#include <string_view>

namespace opd {

enum class QuoteStyle {
  // PyTorch's printQuotedString (a schema's `str s="a\n"`): double quotes; \\ \' \" \a \b \f \n
  // \r \t \v; every other byte outside printable ASCII, those >= 0x80 too, as octal \ooo.
  kSchema,
  // Python's repr of a str (IValue::repr): single quotes, or double quotes when the text holds a
  // single quote and no double one; \\ \n \r \t and the quote itself escaped; other control bytes
  // and DEL as \xhh; bytes >= 0x80 as they are (UTF-8 prints as text).
  kPython,
  // kPython with single quotes always (opd eval's messages: 'x', '\'').
  kPythonSingleQuoted,
};

// `text` between quotes, escaped as `style` says.
inline std::string quote(std::string_view text, QuoteStyle style) {
  const bool schema = style == QuoteStyle::kSchema;
  char mark = '\'';
  if (schema) {
    mark = '"';
  } else if (style == QuoteStyle::kPython && text.find('\'') != std::string_view::npos &&
             text.find('"') == std::string_view::npos) {
    mark = '"';
  }
  constexpr char kHex[] = "0123456789abcdef";
  std::string out(1, mark);
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const char* escape = nullptr;
    switch (c) {
      case '\\':
        escape = "\\\\";
        break;
      case '\n':
        escape = "\\n";
        break;
      case '\r':
        escape = "\\r";
        break;
      case '\t':
        escape = "\\t";
        break;
      case '\a':
        escape = schema ? "\\a" : nullptr;
        break;
      case '\b':
        escape = schema ? "\\b" : nullptr;
        break;
      case '\f':
        escape = schema ? "\\f" : nullptr;
        break;
      case '\v':
        escape = schema ? "\\v" : nullptr;
        break;
      default:
        break;
    }
    if (escape != nullptr) {
      out += escape;
    } else if (ch == mark || (schema && (ch == '\'' || ch == '"'))) {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else if (schema) {
      out += '\\';
      out += static_cast<char>('0' + (c >> 6));
      out += static_cast<char>('0' + ((c >> 3) & 7));
      out += static_cast<char>('0' + (c & 7));
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  out += mark;
  return out;
}

}  // namespace opd
