// Default values of schema arguments. PyTorch reads a default almost without looking at the
// type (function_schema_parser.cpp, parseDefaultValue); here the type decides what is accepted,
// so that "Tensor x=1" or "int x=1.5" are errors rather than values of the wrong kind.

#include <algorithm>
#include <charconv>
#include <limits>

#include "schema/schema_lexer.h"

namespace opd::detail {

namespace {

// PyTorch's dtype names (c10::getStringToDtypeMap), which include the legacy "float", "complex"
// and "long" that native_functions.yaml uses.
constexpr std::string_view kDtypeNames[] = {
    "uint8",           "int8",       "int16",     "short",       "int32",         "int",
    "int64",           "long",       "float16",   "half",        "float32",       "float",
    "float64",         "double",     "complex32", "chalf",       "complex64",     "cfloat",
    "complex",         "complex128", "cdouble",   "bool",        "qint8",         "quint8",
    "qint32",          "bfloat16",   "quint4x2",  "quint2x4",    "bits1x8",       "bits2x4",
    "bits4x2",         "bits8",      "bits16",    "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz",
    "float8_e4m3fnuz", "uint16",     "uint32",    "uint64"};
constexpr std::string_view kLayoutNames[] = {"strided",    "sparse_coo", "sparse_csr", "sparse_csc",
                                             "sparse_bsr", "sparse_bsc", "_mkldnn",    "jagged"};
constexpr std::string_view kMemoryFormatNames[] = {"contiguous_format", "preserve_format",
                                                   "channels_last", "channels_last_3d"};
constexpr std::string_view kReductionNames[] = {"Mean", "Sum"};

template <std::size_t N>
bool contains(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool takes_int(TypeKind k) {
  return k == TypeKind::Int || k == TypeKind::SymInt || k == TypeKind::DeviceIndex ||
         k == TypeKind::ScalarType || k == TypeKind::Layout || k == TypeKind::MemoryFormat ||
         k == TypeKind::Scalar;
}
bool takes_float(TypeKind k) { return k == TypeKind::Float || k == TypeKind::Scalar; }
bool takes_complex(TypeKind k) { return k == TypeKind::Complex || k == TypeKind::Scalar; }
bool takes_bool(TypeKind k) { return k == TypeKind::Bool || k == TypeKind::Scalar; }
bool is_scalar_kind(TypeKind k) {
  return takes_int(k) || takes_float(k) || takes_complex(k) || takes_bool(k);
}
// PyTorch's convertToList supports lists of these (ScalarType & co. are ints there).
bool is_list_element_kind(TypeKind k) { return is_scalar_kind(k) && k != TypeKind::Scalar; }

bool takes_identifier(TypeKind k, std::string_view name) {
  switch (k) {
    case TypeKind::Int:
      return contains(kReductionNames, name);
    case TypeKind::ScalarType:
      return contains(kDtypeNames, name);
    case TypeKind::Layout:
      return contains(kLayoutNames, name);
    case TypeKind::MemoryFormat:
      return contains(kMemoryFormatNames, name);
    default:
      return false;
  }
}

const char* describe(TypeKind k) {
  switch (k) {
    case TypeKind::Int:
      return "an integer or 'Mean'";
    case TypeKind::ScalarType:
      return "an integer or a dtype name such as 'float'";
    case TypeKind::Layout:
      return "an integer or a layout name such as 'strided'";
    case TypeKind::MemoryFormat:
      return "an integer or a memory format name such as 'contiguous_format'";
    case TypeKind::Bool:
      return "True or False";
    case TypeKind::Float:
      return "a float";
    case TypeKind::Complex:
      return "a complex number";
    case TypeKind::Scalar:
      return "a number or a boolean";
    default:
      return "an integer";
  }
}

bool is_imaginary(const Token& t) { return t.kind == TokenKind::Number && t.text.back() == 'j'; }

class DefaultReader {
 public:
  DefaultReader(SchemaLexer& lex, const std::string& arg) : lex_(lex), arg_(arg) {}

  DefaultValue read(const Type& type, std::optional<int64_t> N);

 private:
  [[noreturn]] void fail(const Token& found, const std::string& expected) const {
    fail_at(found, expected, lex_.text());
  }
  bool next_is_none() {
    if (!lex_.peek().is_ident("None")) return false;
    lex_.next();
    return true;
  }
  DefaultValue read_scalar(TypeKind kind);
  DefaultValue read_list(const Type& element);
  double to_double(const Token& at, std::string_view digits, bool negative) const;
  int64_t to_int(const Token& at, std::string_view digits, bool negative) const;

  SchemaLexer& lex_;
  const std::string& arg_;
};

DefaultValue DefaultReader::read(const Type& type, std::optional<int64_t> N) {
  TypeKind kind = type.kind();
  switch (kind) {
    case TypeKind::Optional:
      return next_is_none() ? DefaultValue::none() : read(*type.contained()[0], N);
    case TypeKind::Tensor:
    case TypeKind::Generator:
    case TypeKind::Quantizer:
      if (!next_is_none()) {
        fail(lex_.peek(),
             "Expected None as the default of " + type.str() + " argument '" + arg_ + "'");
      }
      return DefaultValue::none();
    case TypeKind::List: {
      if (next_is_none()) return DefaultValue::none();
      const Type& element = *type.contained()[0];
      if (lex_.peek().is('[') || !N) return read_list(element);
      // "int[2] x=1" is the list [1, 1], as in PyTorch.
      if (!is_list_element_kind(element.kind())) return read_list(element);
      DefaultValue value = read_scalar(element.kind());
      return DefaultValue::list(std::vector<DefaultValue>(static_cast<std::size_t>(*N), value));
    }
    case TypeKind::Device: {
      Token t = lex_.next();
      if (t.kind != TokenKind::String) {
        fail(t, "Expected a device string such as \"cpu\" as the default of '" + arg_ + "'");
      }
      return DefaultValue::from_string(t.value);
    }
    case TypeKind::Str:
    case TypeKind::Dimname: {
      if (next_is_none()) return DefaultValue::none();
      Token t = lex_.next();
      if (t.kind != TokenKind::String) {
        fail(t, "Expected a string or None as the default of '" + arg_ + "'");
      }
      return DefaultValue::from_string(t.value);
    }
    default:
      if (!is_scalar_kind(kind)) {
        fail(lex_.peek(), "Expected no default value for '" + arg_ + "', since type '" +
                              type.str() + "' takes none,");
      }
      return next_is_none() ? DefaultValue::none() : read_scalar(kind);
  }
}

DefaultValue DefaultReader::read_list(const Type& element) {
  if (!is_list_element_kind(element.kind())) {
    fail(lex_.peek(), "Expected None as the default of '" + arg_ + "', since lists of " +
                          element.str() + " take no other,");
  }
  Token open = lex_.next();
  if (!open.is('['))
    fail(open, "Expected a list ('[...]') or None as the default of '" + arg_ + "'");
  std::vector<DefaultValue> items;
  if (lex_.peek().is(']')) {
    lex_.next();
    return DefaultValue::list(std::move(items));
  }
  while (true) {
    items.push_back(read_scalar(element.kind()));
    Token separator = lex_.next();
    if (separator.is(']')) break;
    if (!separator.is(',')) fail(separator, "Expected ',' or ']'");
  }
  return DefaultValue::list(std::move(items));
}

// One value: True/False, an identifier, inf/nan, [-]number, [-]imaginary, or
// [-]number (+|-) imaginary, which is how PyTorch prints complex numbers ("0.+1.j").
DefaultValue DefaultReader::read_scalar(TypeKind kind) {
  Token t = lex_.next();
  auto bad = [&](const Token& found) {
    fail(found, std::string("Expected ") + describe(kind) + " as the default of '" + arg_ + "'");
  };
  bool negative = false;
  if (t.is('-')) {
    negative = true;
    t = lex_.next();
  }
  if (t.kind == TokenKind::Ident) {
    if ((t.text == "inf" || t.text == "nan") && takes_float(kind)) {
      double v = t.text == "inf" ? std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::quiet_NaN();
      return DefaultValue::from_float(negative ? -v : v);
    }
    if (!negative && (t.text == "True" || t.text == "False") && takes_bool(kind)) {
      return DefaultValue::from_bool(t.text == "True");
    }
    if (!negative && takes_identifier(kind, t.text))
      return DefaultValue::identifier(std::string(t.text));
    bad(t);
  }
  if (t.kind != TokenKind::Number || kind == TypeKind::Bool) bad(t);
  std::string_view digits = t.text;
  if (is_imaginary(t)) {
    if (!takes_complex(kind)) bad(t);
    digits.remove_suffix(1);
    return DefaultValue::from_complex({0.0, to_double(t, digits, negative)});
  }
  const Token& sign = lex_.peek();
  if (takes_complex(kind) && (sign.is('+') || sign.is('-')) && is_imaginary(lex_.peek(1))) {
    double real = to_double(t, digits, negative);
    bool imag_negative = lex_.next().is('-');
    Token imag = lex_.next();
    std::string_view imag_digits = imag.text.substr(0, imag.text.size() - 1);
    return DefaultValue::from_complex({real, to_double(imag, imag_digits, imag_negative)});
  }
  if (kind == TypeKind::Complex)
    return DefaultValue::from_complex({to_double(t, digits, negative), 0.0});
  if (digits.find_first_of(".eE") != std::string_view::npos || kind == TypeKind::Float) {
    if (!takes_float(kind)) bad(t);
    return DefaultValue::from_float(to_double(t, digits, negative));
  }
  if (!takes_int(kind)) bad(t);
  return DefaultValue::from_int(to_int(t, digits, negative));
}

double DefaultReader::to_double(const Token& at, std::string_view digits, bool negative) const {
  std::string text = (negative ? "-" : "") + std::string(digits);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail(at, "Expected a number within the range of a double");
  }
  return value;
}

int64_t DefaultReader::to_int(const Token& at, std::string_view digits, bool negative) const {
  std::string text = (negative ? "-" : "") + std::string(digits);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    fail(at, "Expected an integer within the range of int64");
  }
  return value;
}

}  // namespace

DefaultValue read_default_value(SchemaLexer& lex, const Type& type, std::optional<int64_t> N,
                                const std::string& arg) {
  return DefaultReader(lex, arg).read(type, N);
}

}  // namespace opd::detail
