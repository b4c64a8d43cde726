#include "opd/function_schema.h"

#include <algorithm>
#include <array>
#include <ostream>

namespace opd {

// Note [Printing deviations from PyTorch]
// Printing follows PyTorch's FunctionSchema/Argument/AliasInfo/IValue printers character for
// character wherever PyTorch's output parses again. Where it would not, this printer emits a form
// that does, so that print -> parse -> print is always a fixpoint:
//  - An alias on an element type that is not last in the printed text goes next to that element:
//    "Tensor(a)?[]" (PyTorch: "Tensor?(a)[]"), "Tensor(a)[][]" (PyTorch: "Tensor[]()[]").
//  - "int[N] x=[1, 1]" prints as "x=1" only when the list has exactly N values, so that "x=1"
//    reads back as the same list (PyTorch collapses any list of equal ints, with or without N).
//  - An integral float at or above 1e10 in magnitude keeps a trailing '.' ("10000000000."), so
//    that a Scalar default does not read back as an int.
//  - Device defaults print quoted ("cpu" is a string literal in the grammar); bytes >= 0x80 in
//    strings print as \ooo octal escapes.
//  - A fresh alias set ("Tensor!") is named $0, $1, ... and prints as "($0!)", which parses.
// Values and types are kept as written: "ScalarType dtype=float" prints back as written, while
// PyTorch prints the enum's number ("dtype=6"); Dimname and DeviceIndex print as such, while
// PyTorch prints str and int. Both forms parse.

namespace {

constexpr std::array<std::string_view, static_cast<std::size_t>(TypeKind::None) + 1> kBaseNames = {
    "Tensor",      "int",       "SymInt",     "float",        "complex",      "bool",
    "str",         "Scalar",    "ScalarType", "Layout",       "MemoryFormat", "Device",
    "DeviceIndex", "Generator", "Dimname",    "Storage",      "Stream",       "QScheme",
    "Quantizer",   "Capsule",   "Any",        "AnyClassType", "AnyEnumType",  "NoneType"};

bool is_base_kind(TypeKind kind) { return kind <= TypeKind::None; }

void check_non_null(const TypePtr& type, const char* what) {
  OPD_CHECK(type != nullptr, "Type::{}: the contained type must not be null", what);
}

void append_joined(std::string& out, const std::vector<TypePtr>& types) {
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out += ", ";
    out += types[i]->str();
  }
}

bool same_set(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto contains_all = [](const auto& x, const auto& y) {
    return std::all_of(y.begin(), y.end(), [&](const std::string& s) {
      return std::find(x.begin(), x.end(), s) != x.end();
    });
  };
  return contains_all(a, b) && contains_all(b, a);
}

void append_sets(std::string& out, const std::vector<std::string>& sets) {
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (i > 0) out += '|';
    out += sets[i];
  }
}

void append_alias(std::string& out, const AliasInfo* alias) {
  // A container annotation without sets only carries its elements' annotation.
  if (alias != nullptr && !alias->before_set.empty()) out += alias->to_string();
}

// The type of an argument with its alias annotation and list size placed where the grammar
// expects them: "Tensor(a!)", "Tensor(a!)[]", "int[2]", "Tensor(a)?", "t[](*)".
void append_annotated_type(std::string& out, const Type& type, const AliasInfo* alias,
                           std::optional<int64_t> N) {
  switch (type.kind()) {
    case TypeKind::Optional:
      append_annotated_type(out, *type.contained()[0], alias, N);
      out += '?';
      return;
    case TypeKind::List: {
      const AliasInfo* element_alias =
          (alias != nullptr && !alias->contained.empty()) ? &alias->contained[0] : nullptr;
      append_annotated_type(out, *type.contained()[0], element_alias, std::nullopt);
      out += '[';
      if (N) out += std::to_string(*N);
      out += ']';
      append_alias(out, alias);
      return;
    }
    default:
      out += type.str();
      append_alias(out, alias);
  }
}

// PyTorch prints "int[2] stride=[1, 1]" as "stride=1"; see Note [Printing deviations from
// PyTorch] for the N condition. SymInt lists are not collapsed, as in PyTorch.
bool collapses_to_one_int(const Argument& arg) {
  const Type& type = *arg.type();
  if (type.kind() != TypeKind::List || !arg.N() || !arg.default_value()) return false;
  TypeKind element = type.contained()[0]->kind();
  if (element != TypeKind::Int && element != TypeKind::DeviceIndex) return false;
  const DefaultValue& value = *arg.default_value();
  if (value.kind() != DefaultValue::Kind::List) return false;
  const auto& items = value.as_list();
  if (items.size() < 2 || static_cast<int64_t>(items.size()) != *arg.N()) return false;
  return std::all_of(items.begin(), items.end(),
                     [&](const DefaultValue& v) { return v == items[0]; });
}

}  // namespace

// ---- Type ----

Type::Type(TypeKind kind, std::vector<TypePtr> contained, std::string name)
    : kind_(kind), contained_(std::move(contained)), name_(std::move(name)), depth_(1) {
  for (const auto& t : contained_) depth_ = std::max(depth_, t->depth() + 1);
}

TypePtr Type::get(TypeKind kind) {
  OPD_CHECK(is_base_kind(kind), "Type::get: kind {} takes parameters; use its factory",
            static_cast<int>(kind));
  static const auto instances = [] {
    std::array<TypePtr, kBaseNames.size()> all;
    for (std::size_t i = 0; i < all.size(); ++i) {
      all[i] = TypePtr(new Type(static_cast<TypeKind>(i), {}, {}));
    }
    return all;
  }();
  return instances[static_cast<std::size_t>(kind)];
}

TypePtr Type::optional_of(TypePtr element) {
  check_non_null(element, "optional_of");
  return TypePtr(new Type(TypeKind::Optional, {std::move(element)}, {}));
}

TypePtr Type::list_of(TypePtr element) {
  check_non_null(element, "list_of");
  return TypePtr(new Type(TypeKind::List, {std::move(element)}, {}));
}

TypePtr Type::tuple_of(std::vector<TypePtr> elements) {
  for (const auto& t : elements) check_non_null(t, "tuple_of");
  return TypePtr(new Type(TypeKind::Tuple, std::move(elements), {}));
}

TypePtr Type::dict_of(TypePtr key, TypePtr value) {
  check_non_null(key, "dict_of");
  check_non_null(value, "dict_of");
  return TypePtr(new Type(TypeKind::Dict, {std::move(key), std::move(value)}, {}));
}

TypePtr Type::future_of(TypePtr element) {
  check_non_null(element, "future_of");
  return TypePtr(new Type(TypeKind::Future, {std::move(element)}, {}));
}

TypePtr Type::await_of(TypePtr element) {
  check_non_null(element, "await_of");
  return TypePtr(new Type(TypeKind::Await, {std::move(element)}, {}));
}

TypePtr Type::rref_of(TypePtr element) {
  check_non_null(element, "rref_of");
  return TypePtr(new Type(TypeKind::RRef, {std::move(element)}, {}));
}

TypePtr Type::union_of(std::vector<TypePtr> alternatives) {
  OPD_CHECK(!alternatives.empty(), "Type::union_of: a Union needs at least one type");
  for (const auto& t : alternatives) check_non_null(t, "union_of");
  return TypePtr(new Type(TypeKind::Union, std::move(alternatives), {}));
}

TypePtr Type::var(std::string name) {
  OPD_CHECK(!name.empty(), "Type::var: a type variable needs a name");
  return TypePtr(new Type(TypeKind::Var, {}, std::move(name)));
}

TypePtr Type::class_type(std::string qualified_name) {
  OPD_CHECK(!qualified_name.empty(), "Type::class_type: a class type needs a name");
  return TypePtr(new Type(TypeKind::Class, {}, std::move(qualified_name)));
}

std::string Type::str() const {
  std::string out;
  switch (kind_) {
    case TypeKind::Optional:
      return contained_[0]->str() + "?";
    case TypeKind::List:
      return contained_[0]->str() + "[]";
    case TypeKind::Tuple:
      out = "(";
      append_joined(out, contained_);
      return out + ")";
    case TypeKind::Dict:
      return "Dict(" + contained_[0]->str() + ", " + contained_[1]->str() + ")";
    case TypeKind::Future:
      return "Future(" + contained_[0]->str() + ")";
    case TypeKind::Await:
      return "Await(" + contained_[0]->str() + ")";
    case TypeKind::RRef:
      return "RRef(" + contained_[0]->str() + ")";
    case TypeKind::Union:
      out = "Union(";
      append_joined(out, contained_);
      return out + ")";
    case TypeKind::Var:
    case TypeKind::Class:
      return name_;
    default:
      return std::string(kBaseNames[static_cast<std::size_t>(kind_)]);
  }
}

bool operator==(const Type& a, const Type& b) {
  if (&a == &b) return true;
  if (a.kind_ != b.kind_ || a.name_ != b.name_ || a.contained_.size() != b.contained_.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.contained_.size(); ++i) {
    if (!(*a.contained_[i] == *b.contained_[i])) return false;
  }
  return true;
}

std::ostream& operator<<(std::ostream& out, const Type& type) { return out << type.str(); }

// ---- AliasInfo ----

bool AliasInfo::is_wildcard_before() const {
  return std::find(before_set.begin(), before_set.end(), kWildcard) != before_set.end();
}

bool AliasInfo::is_wildcard_after() const {
  return std::find(after_set.begin(), after_set.end(), kWildcard) != after_set.end();
}

std::string AliasInfo::to_string() const {
  std::string out = "(";
  append_sets(out, before_set);
  if (is_write) out += '!';
  if (!same_set(before_set, after_set)) {
    out += " -> ";
    append_sets(out, after_set);
  }
  return out + ")";
}

bool operator==(const AliasInfo& a, const AliasInfo& b) {
  return a.is_write == b.is_write && same_set(a.before_set, b.before_set) &&
         same_set(a.after_set, b.after_set) && a.contained == b.contained;
}

// ---- Argument ----

Argument::Argument(std::string name, TypePtr type, std::optional<int64_t> N,
                   std::optional<DefaultValue> default_value, bool kwarg_only,
                   std::optional<AliasInfo> alias_info)
    : name_(std::move(name)),
      type_(std::move(type)),
      N_(N),
      default_value_(std::move(default_value)),
      kwarg_only_(kwarg_only),
      alias_info_(std::move(alias_info)) {
  OPD_CHECK(type_ != nullptr, "Argument '{}': the type must not be null", name_);
  if (N_) {
    const Type* list =
        type_->kind() == TypeKind::Optional ? type_->contained()[0].get() : type_.get();
    OPD_CHECK(list->kind() == TypeKind::List && *N_ >= 0,
              "Argument '{}': a size [{}] needs a list type and a non-negative size, not {}", name_,
              *N_, type_->str());
  }
}

std::string Argument::to_string() const {
  std::string out;
  append_annotated_type(out, *type_, alias_info(), N_);
  if (!name_.empty()) out += " " + name_;
  if (default_value_) out += "=" + default_value_text();
  return out;
}

std::string Argument::default_value_text() const {
  if (!default_value_) return {};
  return collapses_to_one_int(*this) ? default_value_->as_list()[0].to_string()
                                     : default_value_->to_string();
}

bool operator==(const Argument& a, const Argument& b) {
  return a.name_ == b.name_ && *a.type_ == *b.type_ && a.N_ == b.N_ &&
         a.default_value_ == b.default_value_ && a.kwarg_only_ == b.kwarg_only_ &&
         a.alias_info_ == b.alias_info_;
}

std::ostream& operator<<(std::ostream& out, const Argument& argument) {
  return out << argument.to_string();
}

// ---- FunctionSchema ----

FunctionSchema::FunctionSchema(OperatorName name, std::vector<Argument> arguments,
                               std::vector<Argument> returns, bool is_vararg, bool is_varret)
    : name_(std::move(name)),
      arguments_(std::move(arguments)),
      returns_(std::move(returns)),
      is_vararg_(is_vararg),
      is_varret_(is_varret) {
  const std::string op = name_.name.empty() ? std::string("(anonymous schema)") : name_.to_string();
  OPD_CHECK(!name_.name.empty() || name_.overload_name.empty(),
            "{}: an anonymous schema cannot have an overload name", op);
  bool seen_kwarg_only = false;
  bool seen_default = false;
  for (const Argument& arg : arguments_) {
    OPD_CHECK(!is_vararg_ || !arg.default_value(),
              "{}: a schema with varargs ('...') cannot have default values (argument '{}')", op,
              arg.name());
    OPD_CHECK(arg.kwarg_only() || !seen_kwarg_only,
              "{}: positional argument '{}' follows keyword-only arguments", op, arg.name());
    seen_kwarg_only = seen_kwarg_only || arg.kwarg_only();
    if (arg.default_value()) {
      seen_default = true;
    } else {
      OPD_CHECK(!seen_default || arg.kwarg_only() || arg.type()->kind() == TypeKind::List,
                "{}: positional argument '{}' without a default follows an argument with one", op,
                arg.name());
    }
  }
  for (const Argument& ret : returns_) {
    OPD_CHECK(!ret.default_value() && !ret.kwarg_only(),
              "{}: return '{}' cannot have a default value or be keyword-only", op, ret.name());
  }
}

bool FunctionSchema::is_mutable() const {
  return std::any_of(arguments_.begin(), arguments_.end(),
                     [](const Argument& arg) { return arg.is_write(); });
}

std::optional<std::size_t> FunctionSchema::argument_index(std::string_view name) const {
  for (std::size_t i = 0; i < arguments_.size(); ++i) {
    if (arguments_[i].name() == name) return i;
  }
  return std::nullopt;
}

std::string FunctionSchema::to_string() const {
  std::string out = name_.to_string();
  out += '(';
  bool seen_kwarg_only = false;
  for (std::size_t i = 0; i < arguments_.size(); ++i) {
    if (i > 0) out += ", ";
    if (arguments_[i].kwarg_only() && !seen_kwarg_only) {
      out += "*, ";
      seen_kwarg_only = true;
    }
    out += arguments_[i].to_string();
  }
  if (is_vararg_) out += arguments_.empty() ? "..." : ", ...";
  out += ") -> ";

  // Parentheses unless there is exactly one return and no "...", or only "...". A single return
  // whose text starts with '(' (a tuple) keeps them, or it would read back as several returns.
  bool single = returns_.size() == 1 && !is_varret_;
  std::string first = single ? returns_[0].to_string() : std::string();
  bool parens = !(single || (returns_.empty() && is_varret_)) || (single && first.front() == '(');
  if (parens) out += '(';
  for (std::size_t i = 0; i < returns_.size(); ++i) {
    if (i > 0) out += ", ";
    out += single ? first : returns_[i].to_string();
  }
  if (is_varret_) out += returns_.empty() ? "..." : ", ...";
  if (parens) out += ')';
  return out;
}

FunctionSchema FunctionSchema::with_name(OperatorName name) const& {
  return FunctionSchema(std::move(name), arguments_, returns_, is_vararg_, is_varret_);
}

FunctionSchema FunctionSchema::with_name(OperatorName name) && {
  // Already validated: only the name changes.
  FunctionSchema out = std::move(*this);
  out.name_ = std::move(name);
  return out;
}

bool operator==(const FunctionSchema& a, const FunctionSchema& b) {
  return a.name_ == b.name_ && a.arguments_ == b.arguments_ && a.returns_ == b.returns_ &&
         a.is_vararg_ == b.is_vararg_ && a.is_varret_ == b.is_varret_;
}

std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema) {
  return out << schema.to_string();
}

}  // namespace opd
