#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "opd/error.h"
#include "opd/export.h"

namespace opd {

// Thrown for malformed schema or operator-name text. msg() (the same as what()) is the problem,
// phrased as what was expected and what was found, then the 1-based column, the text and a caret
// under that column:
//   Expected ',' or ')' but found 'x' at column 20
//     aten::foo(Tensor x x) -> Tensor
//                        ^
class OPD_API SchemaParseError : public Error {
 public:
  // `problem` is the first line without the column; `text` is the whole input being parsed.
  SchemaParseError(const std::string& problem, int column, std::string_view text);

  // 1-based byte offset of the offending token; text.size() + 1 for the end of the input.
  int column() const { return column_; }

 private:
  int column_;
};

// The identity of an operator: "aten::add" plus an overload name such as "Tensor". Two schemas
// with the same OperatorName are the same operator.
struct OPD_API OperatorName {
  std::string name;           // "aten::add"; empty only for an anonymous (inferred) schema
  std::string overload_name;  // "Tensor"; empty for the default overload

  // "aten::add.Tensor", or "aten::add" when the overload name is empty.
  std::string to_string() const;

  friend bool operator==(const OperatorName&, const OperatorName&) = default;
};

OPD_API std::ostream& operator<<(std::ostream& out, const OperatorName& name);

// Parses "ns::name" or "ns::name.overload" (the namespace is optional, as in PyTorch). Overload
// names "default" and those starting with "__" are reserved, as in PyTorch.
// Throws SchemaParseError on anything else, including trailing text.
OPD_API OperatorName parse_operator_name(std::string_view text);

}  // namespace opd

template <>
struct std::hash<opd::OperatorName> {
  std::size_t operator()(const opd::OperatorName& op) const noexcept {
    std::size_t h = std::hash<std::string>{}(op.name);
    // boost::hash_combine's mixing, so "a.bc" and "ab.c" land apart.
    return h ^ (std::hash<std::string>{}(op.overload_name) + 0x9e3779b97f4a7c15ULL + (h << 6) +
                (h >> 2));
  }
};
