// opd/quoting.h: the three quoting styles, byte for byte, and the round trip: whatever quote()
// writes, in any style, the schema lexer reads back as the same bytes, and a schema default
// prints again as it was read.

#include "opd/quoting.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opd/function_schema.h"

namespace opd {
namespace {

// Every byte, with the quotes, the backslash and multi-byte UTF-8 in company.
std::vector<std::string> samples() {
  std::vector<std::string> out = {"",
                                  "plain",
                                  "it's",
                                  "say \"hi\"",
                                  "both ' and \"",
                                  "a\\b",
                                  "line\nbreak\r\ttab",
                                  "caf\xc3\xa9",
                                  "\\'\"\\"};
  std::string every_byte;
  for (int c = 0; c < 256; ++c) {
    out.emplace_back(1, static_cast<char>(c));
    every_byte += static_cast<char>(c);
  }
  out.push_back(every_byte);
  return out;
}

// The string default of `str s=<literal>`, read by the schema parser.
std::string read_back(const std::string& literal) {
  FunctionSchema schema = parse_schema("test::f(str s=" + literal + ") -> ()");
  return schema.arguments().at(0).default_value()->as_string();
}

TEST(Quoting, SchemaStyleIsPyTorchsPrintQuotedStringWithOctalForNonAscii) {
  EXPECT_EQ(quote("a\"b'c\\", QuoteStyle::kSchema), R"("a\"b\'c\\")");
  EXPECT_EQ(quote("\a\b\f\n\r\t\v", QuoteStyle::kSchema), R"("\a\b\f\n\r\t\v")");
  EXPECT_EQ(quote(std::string("\0\x1f\x7f\xc3\xa9", 5), QuoteStyle::kSchema),
            R"("\000\037\177\303\251")");
}

TEST(Quoting, PythonStyleIsPythonsReprOfAStr) {
  EXPECT_EQ(quote("abc", QuoteStyle::kPython), "'abc'");
  EXPECT_EQ(quote("it's", QuoteStyle::kPython), R"("it's")");
  EXPECT_EQ(quote("say \"hi\"", QuoteStyle::kPython), R"('say "hi"')");
  EXPECT_EQ(quote("both ' and \"", QuoteStyle::kPython), R"('both \' and "')");
  EXPECT_EQ(quote("\\\n\r\t", QuoteStyle::kPython), R"('\\\n\r\t')");
  EXPECT_EQ(quote(std::string("\0\a\x1f\x7f", 4), QuoteStyle::kPython), R"('\x00\x07\x1f\x7f')");
  EXPECT_EQ(quote("caf\xc3\xa9", QuoteStyle::kPython), "'caf\xc3\xa9'");
}

TEST(Quoting, MessageStyleAlwaysUsesSingleQuotes) {
  EXPECT_EQ(quote("it's", QuoteStyle::kPythonSingleQuoted), R"('it\'s')");
  EXPECT_EQ(quote("\"", QuoteStyle::kPythonSingleQuoted), R"('"')");
  EXPECT_EQ(quote("\n\x01", QuoteStyle::kPythonSingleQuoted), R"('\n\x01')");
}

TEST(Quoting, EveryStyleReadsBackThroughTheSchemaLexer) {
  for (QuoteStyle style :
       {QuoteStyle::kSchema, QuoteStyle::kPython, QuoteStyle::kPythonSingleQuoted}) {
    for (const std::string& s : samples()) {
      const std::string literal = quote(s, style);
      EXPECT_EQ(literal.find_first_of("\n\r"), std::string::npos) << literal;  // one line
      EXPECT_EQ(read_back(literal), s) << literal;
    }
  }
}

TEST(Quoting, SchemaDefaultsPrintAsTheyWereRead) {
  for (const std::string& s : samples()) {
    const std::string literal = quote(s, QuoteStyle::kSchema);
    FunctionSchema schema = parse_schema("test::f(str s=" + literal + ") -> ()");
    EXPECT_EQ(schema.arguments().at(0).default_value()->to_string(), literal);
    EXPECT_EQ(schema.to_string(), "test::f(str s=" + literal + ") -> ()");
  }
}

}  // namespace
}  // namespace opd
