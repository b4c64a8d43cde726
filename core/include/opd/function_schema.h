#pragma once

// Operator schemas in PyTorch's grammar ("aten::add.Tensor(Tensor self, Tensor other, *,
// Scalar alpha=1) -> Tensor"): their types, arguments, alias annotations and default values, the
// parser, and the canonical printer. Printing follows PyTorch's FunctionSchema operator<<, so
// parse -> print reproduces every schema string PyTorch prints, and print -> parse gives back an
// equal structure. Where PyTorch's printed form would not parse again, this printer deviates; see
// Note [Printing deviations from PyTorch] in function_schema.cpp.
//
// Every class here is an immutable value, safe to share between threads once built.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "opd/export.h"
#include "opd/operator_name.h"

namespace opd {

enum class TypeKind {
  // Types without parameters.
  Tensor,
  Int,
  SymInt,
  Float,
  Complex,
  Bool,
  Str,
  Scalar,
  ScalarType,
  Layout,
  MemoryFormat,
  Device,
  DeviceIndex,
  Generator,
  Dimname,
  Storage,
  Stream,
  QScheme,
  Quantizer,
  Capsule,
  Any,
  AnyClassType,
  AnyEnumType,
  None,
  // Types built by the factories below.
  Optional,
  List,
  Tuple,
  Dict,
  Future,
  Await,
  RRef,
  Union,
  Var,
  Class
};

class Type;
using TypePtr = std::shared_ptr<const Type>;

// A schema type. Types compare structurally: two separately built "int[]" are equal.
class OPD_API Type {
 public:
  // The shared instance of a type without parameters (Tensor ... None).
  // Throws opd::Error for Optional and the other kinds that need a factory below.
  static TypePtr get(TypeKind kind);

  // Factories. Every TypePtr passed must be non-null (opd::Error otherwise).
  static TypePtr optional_of(TypePtr element);                 // "T?"
  static TypePtr list_of(TypePtr element);                     // "T[]"
  static TypePtr tuple_of(std::vector<TypePtr> elements);      // "(A, B)"; may be empty
  static TypePtr dict_of(TypePtr key, TypePtr value);          // "Dict(K, V)"
  static TypePtr future_of(TypePtr element);                   // "Future(T)"
  static TypePtr await_of(TypePtr element);                    // "Await(T)"
  static TypePtr rref_of(TypePtr element);                     // "RRef(T)"
  static TypePtr union_of(std::vector<TypePtr> alternatives);  // "Union(A, B)"; REQUIRES: non-empty
  static TypePtr var(std::string name);                        // type variable "t", "tVal"
  // "__torch__.torch.classes.ns.Cls", the fully qualified name of a custom class.
  static TypePtr class_type(std::string qualified_name);

  TypeKind kind() const { return kind_; }
  // Parameters in written order: the element of Optional/List/Future/Await/RRef, key then value
  // of Dict, the elements of Tuple and Union. Empty for the other kinds.
  const std::vector<TypePtr>& contained() const { return contained_; }
  // The name of a Var or Class type; empty for the other kinds.
  const std::string& name() const { return name_; }
  // Levels of nesting: 1 for a type without parameters, 2 for "int[]", and so on.
  int depth() const { return depth_; }

  // As written in schemas: "Tensor", "int[]", "Tensor?[]", "Dict(str, Tensor)", "(Tensor, int)".
  // The None type prints as "NoneType", as PyTorch prints it.
  std::string str() const;

  friend OPD_API bool operator==(const Type& a, const Type& b);

 private:
  Type(TypeKind kind, std::vector<TypePtr> contained, std::string name);

  TypeKind kind_;
  std::vector<TypePtr> contained_;
  std::string name_;
  int depth_;
};

OPD_API std::ostream& operator<<(std::ostream& out, const Type& type);

// Which alias sets a Tensor (or list, dict, ...) argument or return belongs to, before and after
// the call, and whether the operator writes to it. "(a)" is set a; "(a!)" is set a, written;
// "(a -> *)" moves from set a into the wildcard set "*"; "(a|b)" is either set.
// For a list ("Tensor(a!)[]"), the annotation of the elements sits in `contained`, and the list's
// own annotation holds no sets unless it was written ("Tensor[](a!)").
struct OPD_API AliasInfo {
  static constexpr std::string_view kWildcard = "*";

  // Set names in the order written, without repeats. Compared as sets.
  std::vector<std::string> before_set;
  std::vector<std::string> after_set;
  bool is_write = false;
  std::vector<AliasInfo> contained;

  bool is_wildcard_before() const;
  bool is_wildcard_after() const;

  // PyTorch's form: "(a)", "(a!)", "(a|b)", "(a! -> a|b)", "(a -> *)"; the after-sets are shown
  // only when they differ from the before-sets. Does not show `contained`.
  std::string to_string() const;

  friend OPD_API bool operator==(const AliasInfo& a, const AliasInfo& b);
};

// A default value as written in a schema. Values are kept as written: identifiers such as
// "float", "strided", "contiguous_format" or "Mean" stay names (PyTorch turns them into ints);
// the types decide what they mean.
class OPD_API DefaultValue {
 public:
  enum class Kind { None, Bool, Int, Float, Complex, String, Identifier, List };

  DefaultValue() = default;  // None
  static DefaultValue none() { return DefaultValue(); }
  static DefaultValue from_bool(bool value);
  static DefaultValue from_int(int64_t value);
  static DefaultValue from_float(double value);
  static DefaultValue from_complex(std::complex<double> value);
  static DefaultValue from_string(std::string value);
  // A dtype ("float", "long"), layout ("strided"), memory format ("contiguous_format") or
  // reduction ("Mean") name.
  static DefaultValue identifier(std::string name);
  // Elements must be Bool, Int, Float, Complex, String or Identifier values (opd::Error otherwise).
  static DefaultValue list(std::vector<DefaultValue> elements);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }

  // Accessors. Each throws opd::Error when kind() is not the one named.
  bool as_bool() const;
  int64_t as_int() const;
  double as_float() const;
  std::complex<double> as_complex() const;
  const std::string& as_string() const;  // String or Identifier
  const std::vector<DefaultValue>& as_list() const;

  // Canonical text, as PyTorch prints the IValue: None, True, 1, 1., 1.0000000000000001e-05,
  // inf, 0.+1.j, "str" (double quotes, C escapes), Mean, [1, 2].
  std::string to_string() const;

  // Floats compare by value, except that NaN equals NaN, so that print -> parse round trips.
  friend OPD_API bool operator==(const DefaultValue& a, const DefaultValue& b);

 private:
  Kind kind_ = Kind::None;
  bool bool_ = false;
  int64_t int_ = 0;
  std::complex<double> number_;  // Float uses the real part
  std::string string_;
  std::vector<DefaultValue> list_;
};

// An argument or a return of a schema.
class OPD_API Argument {
 public:
  // `N` is the fixed size of a list ("int[2]"); it is only allowed when `type` is a list or an
  // optional list. Throws opd::Error when `type` is null, or N is misplaced or negative.
  Argument(std::string name, TypePtr type, std::optional<int64_t> N = std::nullopt,
           std::optional<DefaultValue> default_value = std::nullopt, bool kwarg_only = false,
           std::optional<AliasInfo> alias_info = std::nullopt);

  const std::string& name() const { return name_; }  // may be empty for a return
  const TypePtr& type() const { return type_; }
  std::optional<int64_t> N() const { return N_; }
  const std::optional<DefaultValue>& default_value() const { return default_value_; }
  bool kwarg_only() const { return kwarg_only_; }
  // nullptr when the argument has no alias annotation.
  const AliasInfo* alias_info() const { return alias_info_ ? &*alias_info_ : nullptr; }
  // The operator writes to this argument: "Tensor(a!)", "Tensor(a!)[]".
  bool is_write() const { return alias_info_ && alias_info_->is_write; }
  // A written keyword-only argument: the "out" of an out= overload.
  bool is_out() const { return kwarg_only_ && is_write(); }

  // As printed inside a schema: "Tensor(a!) out", "int[2] stride=1", "str? mode=None".
  std::string to_string() const;
  // The default as printed in the schema ("1" for int[2] stride=[1, 1]); empty when none.
  std::string default_value_text() const;

  friend OPD_API bool operator==(const Argument& a, const Argument& b);

 private:
  std::string name_;
  TypePtr type_;
  std::optional<int64_t> N_;
  std::optional<DefaultValue> default_value_;
  bool kwarg_only_;
  std::optional<AliasInfo> alias_info_;
};

OPD_API std::ostream& operator<<(std::ostream& out, const Argument& argument);

class OPD_API FunctionSchema {
 public:
  // Throws opd::Error (messages start with the operator name) unless: keyword-only arguments come
  // last; no positional argument without a default follows one with a default (lists excepted,
  // as in PyTorch); a vararg schema has no defaults; returns have no defaults and are not
  // keyword-only; an anonymous schema (empty name) has no overload name.
  FunctionSchema(OperatorName name, std::vector<Argument> arguments, std::vector<Argument> returns,
                 bool is_vararg = false, bool is_varret = false);

  const OperatorName& operator_name() const { return name_; }
  const std::string& name() const { return name_.name; }
  const std::string& overload_name() const { return name_.overload_name; }
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  // Takes any number of further arguments after arguments() ("...").
  bool is_vararg() const { return is_vararg_; }
  // Returns any number of further values after returns() ("-> ...").
  bool is_varret() const { return is_varret_; }

  // Some argument is written to.
  bool is_mutable() const;
  // Position of the argument with that name.
  std::optional<std::size_t> argument_index(std::string_view name) const;

  // Canonical form, identical to PyTorch's: "aten::add.Tensor(Tensor self, Tensor other, *,
  // Scalar alpha=1) -> Tensor". An anonymous schema prints without a name: "(Tensor _0) -> int".
  std::string to_string() const;

  // The same schema under another name (the rvalue form moves the arguments instead of
  // copying them).
  FunctionSchema with_name(OperatorName name) const&;
  FunctionSchema with_name(OperatorName name) &&;

  friend OPD_API bool operator==(const FunctionSchema& a, const FunctionSchema& b);

 private:
  OperatorName name_;
  std::vector<Argument> arguments_;
  std::vector<Argument> returns_;
  bool is_vararg_;
  bool is_varret_;
};

OPD_API std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema);

// Parses a full schema "ns::name[.overload](args) -> returns". Text starting with '(' is an
// anonymous schema, as inferred from a C++ signature: "(Tensor _0, int _1) -> Tensor _0".
// Throws SchemaParseError on malformed text, trailing text included.
OPD_API FunctionSchema parse_schema(std::string_view text);

// Parses either an operator name alone ("ns::foo.bar") or a full schema.
// Throws SchemaParseError on malformed text.
OPD_API std::variant<OperatorName, FunctionSchema> parse_schema_or_name(std::string_view text);

// The schema as pretty-printed JSON (2-space indent):
//   {"name", "overload", "arguments": [{"name", "type", "N"?, "default"?, "kwarg_only",
//    "alias"?}], "returns": [...], "is_vararg", "is_varret"}
// "type" is Type::str() (no size, no alias), "default" the default's text as printed in the
// schema, "alias" an object {"before_set", "after_set", "is_write", "contained"?}.
OPD_API std::string schema_to_json(const FunctionSchema& schema);

}  // namespace opd
