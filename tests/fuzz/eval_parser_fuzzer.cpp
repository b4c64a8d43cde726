// Parses arbitrary text as an `opd eval` program. Malformed text must be rejected with a
// ValueError "opd eval: ... at column N" (N inside the text, or one past its end; the first line
// without a newline) followed by the program and a caret under column N; anything else thrown, and
// any crash (a stack overflow from nesting included: see kMaxNesting), is a bug. A program that
// parses has at least one statement, and every expression's column lies inside the text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "eval_parser.h"
#include "fuzz_support.h"
#include "opd/error.h"

namespace {

using opd::fuzz::fail;

// Every expression of `e` starts inside the text and nests at most `depth_left` more levels.
void check(const opd::cli::eval::Expr& e, std::string_view text, int depth_left) {
  using Kind = opd::cli::eval::Expr::Kind;
  if (e.column < 1 || e.column > text.size()) {
    fail("expression column outside the text", text, std::to_string(e.column));
  }
  if (e.kind == Kind::List || e.kind == Kind::Call) {
    if (depth_left == 0) fail("nesting past kMaxNesting was accepted", text, "");
    for (const auto& x : e.items) check(x, text, depth_left - 1);
    for (const auto& x : e.kwarg_values) check(x, text, depth_left - 1);
  }
  if (e.kwarg_names.size() != e.kwarg_values.size())
    fail("keyword names and values differ", text, "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  opd::cli::eval::Program program;
  try {
    program = opd::cli::eval::parse_program(text);
  } catch (const opd::ValueError& e) {
    const std::string& msg = e.msg();
    if (msg.rfind("opd eval: ", 0) != 0) fail("error without the 'opd eval: ' prefix", text, msg);
    // "<message> at column N\n  <program>\n  <caret>"
    size_t first_newline = msg.find('\n');
    size_t at = msg.rfind(" at column ", first_newline);
    if (first_newline == std::string::npos || at == std::string::npos) {
      fail("syntax error without a column", text, msg);
    }
    size_t column = std::strtoul(msg.c_str() + at + 11, nullptr, 10);
    if (column < 1 || column > size + 1) fail("error column outside the text", text, msg);
    std::string shown(text);  // whitespace controls shown as spaces
    for (char& c : shown) {
      if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') c = ' ';
    }
    std::string tail = "\n  " + shown + "\n  " + std::string(column - 1, ' ') + "^";
    if (msg.compare(first_newline, std::string::npos, tail) != 0) {
      fail("error does not show the program and a caret under the column", text, msg);
    }
    return 0;
  }
  if (program.statements.empty()) fail("a program without statements parsed", text, "");
  if (program.text != text) fail("the program does not keep its text", text, program.text);
  for (const auto& s : program.statements) check(s.expr, text, opd::cli::eval::kMaxNesting);
  return 0;
}
