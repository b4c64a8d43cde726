#pragma once

// Text helpers for the C++ that derivatives.yaml formulas and generated signatures hold.

#include <set>
#include <string>

namespace opd::gen {

// Replaces `from` by `to` wherever it stands as a whole word (no identifier character on
// either side).
std::string replace_word(const std::string& text, const std::string& from, const std::string& to);
// Identifiers used as variables: not after '.', "::" or "->".
std::set<std::string> variables(const std::string& text);

}  // namespace opd::gen
