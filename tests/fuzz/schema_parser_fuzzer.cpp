// Parses arbitrary text as a schema or an operator name. Malformed text must be rejected with a
// SchemaParseError whose column lies inside the text; anything else thrown, and any crash, is a
// bug. Text that parses must print to text that parses back to an equal structure and prints
// identically: print -> parse -> print is a fixpoint.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_support.h"
#include "opd/function_schema.h"

namespace {

using Parsed = std::variant<opd::OperatorName, opd::FunctionSchema>;

std::string print(const Parsed& parsed) {
  return std::visit([](const auto& p) { return p.to_string(); }, parsed);
}

using opd::fuzz::fail;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Parsed parsed;
  try {
    parsed = opd::parse_schema_or_name(text);
  } catch (const opd::SchemaParseError& e) {
    if (e.column() < 1 || static_cast<size_t>(e.column()) > size + 1) {
      fail("error column outside the text", text, e.what());
    }
    return 0;
  }
  std::string first = print(parsed);
  Parsed reparsed;
  try {
    reparsed = opd::parse_schema_or_name(first);
  } catch (const opd::SchemaParseError& e) {
    fail("printed text does not parse", text, first + "\n" + e.what());
  }
  if (!(reparsed == parsed)) fail("printed text parses to a different structure", text, first);
  std::string second = print(reparsed);
  if (second != first)
    fail("print -> parse -> print is not a fixpoint", text, first + "\n" + second);
  if (const auto* schema = std::get_if<opd::FunctionSchema>(&parsed)) {
    (void)opd::schema_to_json(*schema);
  }
  return 0;
}
