// The schema grammar (PyTorch's torch/csrc/jit/frontend/function_schema_parser.cpp and
// schema_type_parser.cpp), with the same acceptance except where PyTorch silently drops or
// misreads input; those cases are errors here (see each check).

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

#include "opd/function_schema.h"
#include "schema/schema_lexer.h"

namespace opd {

namespace {

using detail::SchemaLexer;
using detail::Token;
using detail::TokenKind;

// Deeper types are errors, so that a hostile schema cannot exhaust the stack of the parser or of
// the recursive printers and comparisons. Real schemas nest at most 4 levels.
constexpr int kMaxTypeDepth = 32;
// "int[N] x=1" expands to N values; real schemas use N <= 6.
constexpr int64_t kMaxListSize = 1024;

const std::unordered_map<std::string_view, TypeKind>& base_types() {
  static const std::unordered_map<std::string_view, TypeKind> types = {
      {"int", TypeKind::Int},
      {"SymInt", TypeKind::SymInt},
      {"float", TypeKind::Float},
      {"complex", TypeKind::Complex},
      {"bool", TypeKind::Bool},
      {"str", TypeKind::Str},
      {"Scalar", TypeKind::Scalar},
      {"ScalarType", TypeKind::ScalarType},
      {"Layout", TypeKind::Layout},
      {"MemoryFormat", TypeKind::MemoryFormat},
      {"Device", TypeKind::Device},
      {"DeviceIndex", TypeKind::DeviceIndex},
      {"Generator", TypeKind::Generator},
      {"Dimname", TypeKind::Dimname},
      {"Storage", TypeKind::Storage},
      {"Stream", TypeKind::Stream},
      {"QScheme", TypeKind::QScheme},
      {"Quantizer", TypeKind::Quantizer},
      {"ConstQuantizerPtr", TypeKind::Int},  // as in PyTorch, a legacy spelling of int
      {"Capsule", TypeKind::Capsule},
      {"Any", TypeKind::Any},
      {"AnyClassType", TypeKind::AnyClassType},
      {"AnyEnumType", TypeKind::AnyEnumType},
      {"None", TypeKind::None},
      {"NoneType", TypeKind::None},
  };
  return types;
}

// PyTorch treats any unknown lower-case name as a type variable, so a typo such as "tensor" or
// "flaot" silently becomes one. Its schemas only use t, t1, t2 and tVal; accept that pattern.
bool is_type_variable(std::string_view word) {
  if (word.empty() || word[0] != 't') return false;
  std::string_view rest = word.substr(1);
  if (rest.empty()) return true;
  if (rest[0] >= 'A' && rest[0] <= 'Z') return true;
  return std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_keyword(const Token& t) {
  return t.is_ident("True") || t.is_ident("False") || t.is_ident("None");
}
bool is_name(const Token& t) { return t.kind == TokenKind::Ident && !is_keyword(t); }

// PyTorch's DictType::create accepts these key types only.
bool is_dict_key(TypeKind k) {
  switch (k) {
    case TypeKind::Any:
    case TypeKind::Int:
    case TypeKind::SymInt:
    case TypeKind::Bool:
    case TypeKind::Float:
    case TypeKind::Complex:
    case TypeKind::Str:
    case TypeKind::Dimname:
    case TypeKind::Tensor:
    case TypeKind::Device:
    case TypeKind::DeviceIndex:
    case TypeKind::ScalarType:
    case TypeKind::Layout:
    case TypeKind::MemoryFormat:
      return true;
    default:
      return false;
  }
}

struct Typed {
  TypePtr type;
  std::optional<AliasInfo> alias;
  Token alias_start;  // where `alias` was written, for errors
};

struct Annotated {
  TypePtr type;
  std::optional<int64_t> N;
  std::optional<AliasInfo> alias;
};

enum class Mode { NameOnly, SchemaOnly, NameOrSchema };

class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : lex_(text) {}

  std::variant<OperatorName, FunctionSchema> parse(Mode mode);

 private:
  [[noreturn]] void fail(const Token& found, const std::string& expected) const {
    detail::fail_at(found, expected, lex_.text());
  }
  Token expect(char c, const char* expected) {
    Token t = lex_.next();
    if (!t.is(c)) fail(t, expected);
    return t;
  }

  OperatorName parse_name();
  void parse_arguments(std::vector<Argument>& args, bool& is_vararg);
  void parse_returns(std::vector<Argument>& returns, bool& is_varret);
  Annotated parse_annotated_type();
  Typed parse_type(int depth);
  TypePtr parse_inner_type(int depth, const char* container);
  TypePtr checked_depth(TypePtr type, const Token& at) const;
  std::optional<AliasInfo> parse_alias();
  void parse_alias_sets(std::vector<std::string>& sets);

  SchemaLexer lex_;
  int next_fresh_set_ = 0;
};

std::variant<OperatorName, FunctionSchema> SchemaParser::parse(Mode mode) {
  OperatorName name;
  bool anonymous = mode != Mode::NameOnly && lex_.peek().is('(');
  if (!anonymous) name = parse_name();
  if (mode == Mode::NameOnly || (mode == Mode::NameOrSchema && !lex_.peek().is('('))) {
    const Token& end = lex_.peek();
    if (end.kind != TokenKind::End) {
      fail(end, mode == Mode::NameOnly ? "Expected end of input" : "Expected '(' or end of input");
    }
    return name;
  }
  std::vector<Argument> args;
  std::vector<Argument> returns;
  bool is_vararg = false;
  bool is_varret = false;
  parse_arguments(args, is_vararg);
  Token arrow = lex_.next();
  if (arrow.kind != TokenKind::Arrow) fail(arrow, "Expected '->'");
  parse_returns(returns, is_varret);
  const Token& end = lex_.peek();
  if (end.kind != TokenKind::End) fail(end, "Expected end of input");
  return FunctionSchema(std::move(name), std::move(args), std::move(returns), is_vararg, is_varret);
}

OperatorName SchemaParser::parse_name() {
  Token first = lex_.next();
  if (!is_name(first)) fail(first, "Expected an operator name");
  OperatorName op{std::string(first.text), {}};
  if (lex_.peek().kind == TokenKind::DoubleColon) {
    lex_.next();
    Token second = lex_.next();
    if (!is_name(second)) fail(second, "Expected an operator name after '::'");
    op.name += "::" + std::string(second.text);
  }
  if (lex_.peek().is('.')) {
    lex_.next();
    Token overload = lex_.next();
    if (!is_name(overload)) fail(overload, "Expected an overload name after '.'");
    // PyTorch reserves these: torch.ops.ns.op.default is the empty overload, and dunder names
    // are Python attributes.
    if (overload.text == "default" || overload.text.starts_with("__")) {
      fail(overload, "Expected an overload name other than 'default' or '__...' (reserved)");
    }
    op.overload_name = std::string(overload.text);
  }
  return op;
}

void SchemaParser::parse_arguments(std::vector<Argument>& args, bool& is_vararg) {
  expect('(', "Expected '('");
  if (lex_.peek().is(')')) {
    lex_.next();
    return;
  }
  bool kwarg_only = false;
  bool star_pending = false;  // a '*' not yet followed by an argument
  bool seen_default = false;
  std::optional<Token> first_default;  // where the first default value starts
  std::string first_default_arg;
  // The names in `args`: a set, so that the duplicate check stays linear in the argument count
  // (schemas come from users and manifests; scanning `args` made 200k arguments take 25 s).
  std::unordered_set<std::string> names;
  while (true) {
    const Token& start = lex_.peek();
    if (start.is('*')) {
      if (kwarg_only) fail(start, "Expected an argument ('*' may appear only once)");
      lex_.next();
      kwarg_only = star_pending = true;
    } else if (start.kind == TokenKind::Ellipsis) {
      if (star_pending) fail(start, "Expected a keyword-only argument after '*'");
      lex_.next();
      is_vararg = true;
    } else {
      Annotated at = parse_annotated_type();
      Token name = lex_.next();
      if (!is_name(name)) fail(name, "Expected an argument name");
      std::string arg_name(name.text);
      if (!names.insert(arg_name).second) {
        fail(name, "Expected a name not used by another argument");
      }
      std::optional<DefaultValue> value;
      if (lex_.peek().is('=')) {
        lex_.next();
        if (!first_default) {
          first_default = lex_.peek();
          first_default_arg = arg_name;
        }
        value = detail::read_default_value(lex_, *at.type, at.N, arg_name);
        seen_default = true;
      } else if (seen_default && !kwarg_only && at.type->kind() != TypeKind::List) {
        // PyTorch's checkSchema; lists are exempt there for historical schemas.
        fail(lex_.peek(), "Expected a default value for '" + arg_name +
                              "', which follows an argument with one,");
      }
      args.emplace_back(std::move(arg_name), std::move(at.type), at.N, std::move(value), kwarg_only,
                        std::move(at.alias));
      star_pending = false;
    }
    Token separator = lex_.next();
    if (separator.is(')')) {
      if (star_pending) fail(separator, "Expected a keyword-only argument after '*'");
      break;
    }
    if (is_vararg) fail(separator, "Expected ')' after '...', which must come last,");
    if (!separator.is(',')) fail(separator, "Expected ',' or ')'");
  }
  if (is_vararg && first_default) {
    fail(*first_default, "Expected no default value for '" + first_default_arg +
                             "' in a schema with varargs ('...')");
  }
}

void SchemaParser::parse_returns(std::vector<Argument>& returns, bool& is_varret) {
  auto parse_return = [&] {
    Annotated at = parse_annotated_type();
    std::string name;
    if (is_name(lex_.peek())) name = std::string(lex_.next().text);
    returns.emplace_back(std::move(name), std::move(at.type), at.N, std::nullopt, false,
                         std::move(at.alias));
  };
  const Token& start = lex_.peek();
  if (start.kind == TokenKind::Ellipsis) {
    lex_.next();
    is_varret = true;
    return;
  }
  if (!start.is('(')) {
    parse_return();
    return;
  }
  lex_.next();
  if (lex_.peek().is(')')) {
    lex_.next();
    return;
  }
  while (true) {
    if (lex_.peek().kind == TokenKind::Ellipsis) {
      lex_.next();
      is_varret = true;
    } else {
      parse_return();
    }
    Token separator = lex_.next();
    if (separator.is(')')) break;
    if (is_varret) fail(separator, "Expected ')' after '...', which must come last,");
    if (!separator.is(',')) fail(separator, "Expected ',' or ')'");
  }
}

// type ['[' N ']' [alias] ['?']]; a fixed size is only written at the argument level.
Annotated SchemaParser::parse_annotated_type() {
  Typed t = parse_type(0);
  Annotated at{std::move(t.type), std::nullopt, std::move(t.alias)};
  if (!lex_.peek().is('[')) return at;
  Token open = lex_.next();
  Token size = lex_.next();
  int64_t n = -1;
  if (size.kind == TokenKind::Number) {
    auto [end, ec] = std::from_chars(size.text.data(), size.text.data() + size.text.size(), n);
    if (ec != std::errc() || end != size.text.data() + size.text.size()) n = -1;
  }
  if (n < 0) fail(size, "Expected a list size (a non-negative integer) or ']'");
  if (n > kMaxListSize) fail(size, fmt::format("Expected a list size of at most {}", kMaxListSize));
  expect(']', "Expected ']' after the list size");
  at.N = n;
  at.type = checked_depth(Type::list_of(std::move(at.type)), open);
  std::optional<AliasInfo> container = parse_alias();
  if (at.alias) {
    if (!container) container = AliasInfo{{}, {}, at.alias->is_write, {}};
    container->contained.push_back(std::move(*at.alias));
  }
  at.alias = std::move(container);
  if (lex_.peek().is('?'))
    at.type = checked_depth(Type::optional_of(std::move(at.type)), lex_.next());
  return at;
}

TypePtr SchemaParser::checked_depth(TypePtr type, const Token& at) const {
  if (type->depth() > kMaxTypeDepth) {
    fail(at, fmt::format("Expected at most {} levels of type nesting", kMaxTypeDepth));
  }
  return type;
}

Typed SchemaParser::parse_type(int depth) {
  Token start = lex_.next();
  if (depth >= kMaxTypeDepth) {
    fail(start, fmt::format("Expected at most {} levels of type nesting", kMaxTypeDepth));
  }
  Typed t;
  auto open = [&] { expect('(', "Expected '('"); };
  auto close = [&] { expect(')', "Expected ')'"); };
  std::string_view word = start.kind == TokenKind::Ident ? start.text : std::string_view();
  if (start.is('(')) {
    std::vector<TypePtr> elements;
    if (!lex_.peek().is(')')) {
      while (true) {
        elements.push_back(parse_inner_type(depth, "a tuple type"));
        if (!lex_.peek().is(',')) break;
        lex_.next();
      }
    }
    close();
    t.type = Type::tuple_of(std::move(elements));
  } else if (word == "Future" || word == "Await" || word == "RRef") {
    open();
    TypePtr element = parse_inner_type(depth, word == "Future"  ? "Future(...)"
                                              : word == "Await" ? "Await(...)"
                                                                : "RRef(...)");
    close();
    t.type = word == "Future"  ? Type::future_of(std::move(element))
             : word == "Await" ? Type::await_of(std::move(element))
                               : Type::rref_of(std::move(element));
  } else if (word == "Dict") {
    open();
    const Token key_start = lex_.peek();
    TypePtr key = parse_inner_type(depth, "Dict(...)");
    if (!is_dict_key(key->kind())) {
      fail(key_start,
           "Expected a Dict key type (int, float, complex, bool, str, Tensor, Device "
           "or Any)");
    }
    expect(',', "Expected ','");
    TypePtr value = parse_inner_type(depth, "Dict(...)");
    close();
    t.type = Type::dict_of(std::move(key), std::move(value));
    t.alias_start = lex_.peek();
    t.alias = parse_alias();
  } else if (word == "Union") {
    open();
    std::vector<TypePtr> alternatives{parse_inner_type(depth, "Union(...)")};
    while (lex_.peek().is(',')) {
      lex_.next();
      alternatives.push_back(parse_inner_type(depth, "Union(...)"));
    }
    close();
    t.type = Type::union_of(std::move(alternatives));
    t.alias_start = lex_.peek();
    t.alias = parse_alias();
  } else if (word == "__torch__") {
    // Exactly __torch__.torch.classes.<namespace>.<class>, as PyTorch requires.
    std::string qualified(word);
    for (std::string_view part : {"torch", "classes", "", ""}) {
      expect('.', "Expected '.' in a class type __torch__.torch.classes.ns.Class");
      Token t_part = lex_.next();
      if (!is_name(t_part) || (!part.empty() && t_part.text != part)) {
        fail(t_part, part.empty()
                         ? std::string("Expected a name in __torch__.torch.classes.ns.Class")
                         : "Expected '" + std::string(part) + "'");
      }
      qualified += "." + std::string(t_part.text);
    }
    t.type = Type::class_type(std::move(qualified));
  } else if (is_name(start) || start.is_ident("None")) {
    if (word == "Tensor") {
      t.type = Type::get(TypeKind::Tensor);
    } else if (auto it = base_types().find(word); it != base_types().end()) {
      t.type = Type::get(it->second);
    } else if (word == "double") {
      fail(start, "Expected a type; use 'float' for a C++ double,");
    } else if (word == "int64_t") {
      fail(start, "Expected a type; use 'int' (or 'SymInt') for a C++ int64_t,");
    } else if (is_type_variable(word)) {
      t.type = Type::var(std::string(word));
    } else {
      fail(start,
           "Expected a type (Tensor, SymInt, int, float, bool, str, Scalar, ..., or a "
           "type variable t, t1, tVal)");
    }
    t.alias_start = lex_.peek();
    t.alias = parse_alias();
  } else {
    fail(start, "Expected a type");
  }

  while (true) {
    const Token& suffix = lex_.peek();
    if (suffix.is('[') && lex_.peek(1).is(']')) {
      Token at = lex_.next();
      lex_.next();
      t.type = checked_depth(Type::list_of(std::move(t.type)), at);
      Token container_at = lex_.peek();
      std::optional<AliasInfo> container = parse_alias();
      if (container && !t.alias) t.alias_start = std::move(container_at);
      if (t.alias) {
        // The element's annotation moves inside the list's, which inherits its write flag.
        if (!container) container = AliasInfo{{}, {}, t.alias->is_write, {}};
        container->contained.push_back(std::move(*t.alias));
      }
      t.alias = std::move(container);
    } else if (suffix.is('?')) {
      Token at = lex_.next();
      t.type = checked_depth(Type::optional_of(std::move(t.type)), at);
    } else {
      break;
    }
  }
  return t;
}

// A type parameter. PyTorch ignores alias annotations there; they are errors here.
TypePtr SchemaParser::parse_inner_type(int depth, const char* container) {
  Typed t = parse_type(depth + 1);
  if (t.alias) {
    fail(t.alias_start, std::string("Expected no alias annotation inside ") + container);
  }
  return std::move(t.type);
}

// '(' sets ['!'] ['->' sets] ')' or '!' (a fresh set); nothing otherwise.
std::optional<AliasInfo> SchemaParser::parse_alias() {
  const Token& start = lex_.peek();
  AliasInfo alias;
  if (start.is('!')) {
    lex_.next();
    std::string fresh = "$" + std::to_string(next_fresh_set_++);
    alias.before_set = alias.after_set = {fresh};
    alias.is_write = true;
    return alias;
  }
  if (!start.is('(')) return std::nullopt;
  lex_.next();
  parse_alias_sets(alias.before_set);
  if (lex_.peek().is('!')) {
    lex_.next();
    alias.is_write = true;
  }
  if (lex_.peek().kind == TokenKind::Arrow) {
    lex_.next();
    parse_alias_sets(alias.after_set);
    expect(')', "Expected '|' or ')' in the alias annotation");
  } else {
    alias.after_set = alias.before_set;
    expect(')', alias.is_write ? "Expected '->' or ')' in the alias annotation"
                               : "Expected '|', '!', '->' or ')' in the alias annotation");
  }
  return alias;
}

// name ('|' name)*, where a name is an identifier, '*' (the wildcard) or $N. As in PyTorch, names
// after a wildcard are dropped: the wildcard already includes them.
void SchemaParser::parse_alias_sets(std::vector<std::string>& sets) {
  // `seen` holds the names in `sets`, so that this stays linear in their number (as the argument
  // names in parse_arguments).
  std::unordered_set<std::string> seen(sets.begin(), sets.end());
  bool has_wildcard = seen.count(std::string(AliasInfo::kWildcard)) > 0;
  while (true) {
    Token t = lex_.next();
    std::string name;
    if (t.is('*')) {
      name = AliasInfo::kWildcard;
    } else if (t.kind == TokenKind::Ident || t.kind == TokenKind::FreshSet) {
      name = std::string(t.text);
    } else {
      fail(t, "Expected an alias set name or '*'");
    }
    if (!has_wildcard && seen.insert(name).second) {
      has_wildcard = name == AliasInfo::kWildcard;
      sets.push_back(std::move(name));
    }
    if (!lex_.peek().is('|')) return;
    lex_.next();
  }
}

}  // namespace

OperatorName parse_operator_name(std::string_view text) {
  return std::get<OperatorName>(SchemaParser(text).parse(Mode::NameOnly));
}

FunctionSchema parse_schema(std::string_view text) {
  return std::get<FunctionSchema>(SchemaParser(text).parse(Mode::SchemaOnly));
}

std::variant<OperatorName, FunctionSchema> parse_schema_or_name(std::string_view text) {
  return SchemaParser(text).parse(Mode::NameOrSchema);
}

}  // namespace opd
