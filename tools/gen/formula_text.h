#pragma once

// Text helpers for the C++ that derivatives.yaml formulas and generated signatures hold, and the
// checks on YAML text that opd-gen writes into generated code.

#include <set>
#include <string>
#include <string_view>

namespace opd::gen {

// Replaces `from` by `to` wherever it stands as a whole word (no identifier character on
// either side).
std::string replace_word(const std::string& text, const std::string& from, const std::string& to);
// Identifiers used as variables: not after '.', "::" or "->".
std::set<std::string> variables(const std::string& text);

// A C++20 keyword or alternative token ("class", "and", "co_await").
bool is_cpp_keyword(std::string_view word);
// [A-Za-z_][A-Za-z0-9_]* and not a keyword: what opd-gen may declare or name in generated code
// (a kernel, a namespace, a function).
bool is_cpp_identifier(std::string_view word);

// Note [Formula checks]
// A derivatives.yaml formula is a C++ expression by design, pasted into generated code as
// `grad_inputs[i] = <formula>;` after a `#line` directive. It may call anything, but it must stay
// that one expression: it cannot end the statement or the block around it, start a directive, or
// hide text from the checks. So a formula is printable ASCII on one line (no control characters;
// no bytes >= 0x80, which could be bidirectional-override tricks), with no ';', '#', '\\', string
// or character literals ('"', '\''), no line comment ("//"), block comments closed within it
// ("/*is_max=*/true" is fine), no digraphs standing for brackets or '#' ("<%", "%>", "<:", ":>",
// "%:"; "<::" as in "vector<::x>" is not one), and (), [] and {} balanced and properly nested
// ("IntArrayRef({dim})" is fine).
// The problem with `formula` under these rules ("holds ';' at column 9"), or "" when it has none.
std::string formula_problem(std::string_view formula);

}  // namespace opd::gen
