#pragma once

// Note [Alias analysis kind]
// What a definition says about how its operator aliases and writes its arguments, as PyTorch's
// c10::AliasAnalysisKind:
//   FROM_SCHEMA    the schema's annotations (Tensor(a!), Tensor(a)) are the whole truth; what
//                  Library::def(schema) gives, and define(schema) in Python;
//   CONSERVATIVE   the operator may alias or write anything; what a def whose schema is inferred
//                  from its kernel gives (def("foo", kernel));
//   PURE_FUNCTION  it aliases and writes nothing.
// A schema with alias annotations requires FROM_SCHEMA: the other kinds would contradict it
// (PyTorch's JIT refuses the operator when it first analyses it; having no JIT, the dispatcher
// refuses the def). Dumps show the kind under the schema ("alias analysis kind: FROM_SCHEMA"),
// as PyTorch's do; a def made without any (only the Python testing handle's def_legacy, as
// PyTorch's legacy RegisterOperators) is CONSERVATIVE and shows "CONSERVATIVE (default)". The
// values cross the plugin boundary: new kinds are appended, never reordered.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace opd {

enum class AliasAnalysisKind : uint8_t { CONSERVATIVE, FROM_SCHEMA, PURE_FUNCTION };

inline constexpr std::array<std::string_view, 3> kAliasAnalysisKindNames = {
    "CONSERVATIVE", "FROM_SCHEMA", "PURE_FUNCTION"};

// "UNKNOWN" for a kind this header does not know: one a newer core added, seen by a plugin
// built against this header.
constexpr std::string_view to_string(AliasAnalysisKind k) {
  const auto i = static_cast<size_t>(k);
  return i < kAliasAnalysisKindNames.size() ? kAliasAnalysisKindNames[i] : "UNKNOWN";
}

// The kind named `name` (PyTorch's spelling), or nullopt.
constexpr std::optional<AliasAnalysisKind> alias_analysis_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < kAliasAnalysisKindNames.size(); ++i) {
    if (kAliasAnalysisKindNames[i] == name) return static_cast<AliasAnalysisKind>(i);
  }
  return std::nullopt;
}

}  // namespace opd
