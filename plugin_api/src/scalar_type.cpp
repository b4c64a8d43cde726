#include "opd/scalar_type.h"

#include <string>

#include "opd/error.h"

namespace opd {

const char* to_string(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "Bool";
    case ScalarType::UInt8:
      return "Byte";
    case ScalarType::Int8:
      return "Char";
    case ScalarType::Int16:
      return "Short";
    case ScalarType::Int32:
      return "Int";
    case ScalarType::Int64:
      return "Long";
    case ScalarType::Float16:
      return "Half";
    case ScalarType::BFloat16:
      return "BFloat16";
    case ScalarType::Float32:
      return "Float";
    case ScalarType::Float64:
      return "Double";
    case ScalarType::ComplexFloat:
      return "ComplexFloat";
    case ScalarType::ComplexDouble:
      return "ComplexDouble";
    case ScalarType::Undefined:
      return "Undefined";
  }
  return "Undefined";
}

const char* python_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::UInt8:
      return "uint8";
    case ScalarType::Int8:
      return "int8";
    case ScalarType::Int16:
      return "int16";
    case ScalarType::Int32:
      return "int32";
    case ScalarType::Int64:
      return "int64";
    case ScalarType::Float16:
      return "float16";
    case ScalarType::BFloat16:
      return "bfloat16";
    case ScalarType::Float32:
      return "float32";
    case ScalarType::Float64:
      return "float64";
    case ScalarType::ComplexFloat:
      return "complex64";
    case ScalarType::ComplexDouble:
      return "complex128";
    case ScalarType::Undefined:
      return "undefined";
  }
  return "undefined";
}

namespace {

struct NamedType {
  std::string_view name;
  ScalarType type;
};

// Python names and aliases first, then c10's names, then the enumerators that differ from both.
constexpr NamedType kNames[] = {
    {"bool", ScalarType::Bool},
    {"uint8", ScalarType::UInt8},
    {"int8", ScalarType::Int8},
    {"int16", ScalarType::Int16},
    {"short", ScalarType::Int16},
    {"int32", ScalarType::Int32},
    {"int", ScalarType::Int32},
    {"int64", ScalarType::Int64},
    {"long", ScalarType::Int64},
    {"float16", ScalarType::Float16},
    {"half", ScalarType::Float16},
    {"bfloat16", ScalarType::BFloat16},
    {"float32", ScalarType::Float32},
    {"float", ScalarType::Float32},
    {"float64", ScalarType::Float64},
    {"double", ScalarType::Float64},
    {"complex64", ScalarType::ComplexFloat},
    {"cfloat", ScalarType::ComplexFloat},
    {"complex128", ScalarType::ComplexDouble},
    {"cdouble", ScalarType::ComplexDouble},
    {"Bool", ScalarType::Bool},
    {"Byte", ScalarType::UInt8},
    {"Char", ScalarType::Int8},
    {"Short", ScalarType::Int16},
    {"Int", ScalarType::Int32},
    {"Long", ScalarType::Int64},
    {"Half", ScalarType::Float16},
    {"BFloat16", ScalarType::BFloat16},
    {"Float", ScalarType::Float32},
    {"Double", ScalarType::Float64},
    {"ComplexFloat", ScalarType::ComplexFloat},
    {"ComplexDouble", ScalarType::ComplexDouble},
    {"UInt8", ScalarType::UInt8},
    {"Int8", ScalarType::Int8},
    {"Int16", ScalarType::Int16},
    {"Int32", ScalarType::Int32},
    {"Int64", ScalarType::Int64},
    {"Float16", ScalarType::Float16},
    {"Float32", ScalarType::Float32},
    {"Float64", ScalarType::Float64},
};

}  // namespace

ScalarType parse_scalar_type(std::string_view name) {
  std::string_view bare = name;
  if (bare.starts_with("torch.")) bare.remove_prefix(6);
  for (const NamedType& n : kNames) {
    if (n.name == bare) return n.type;
  }
  throw ValueError(fmt::format(
      "Unknown scalar type '{}'; expected a dtype name such as float32, float, int64, long or "
      "bool",
      name));
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined || b == ScalarType::Undefined) return ScalarType::Undefined;
  // torch.promote_types (c10/core/ScalarType.cpp, _promoteTypesLookup) for our types, in
  // enumerator order. The table is symmetric; scalar_type_test checks it.
  constexpr ScalarType b1 = ScalarType::Bool, u1 = ScalarType::UInt8, i1 = ScalarType::Int8,
                       i2 = ScalarType::Int16, i4 = ScalarType::Int32, i8 = ScalarType::Int64,
                       f2 = ScalarType::Float16, bf = ScalarType::BFloat16,
                       f4 = ScalarType::Float32, f8 = ScalarType::Float64,
                       c4 = ScalarType::ComplexFloat, c8 = ScalarType::ComplexDouble;
  static constexpr ScalarType kTable[kNumScalarTypes][kNumScalarTypes] = {
      /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8  c4  c8 */
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8, c4, c8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8, c4, c8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8, c4, c8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8, c4, c8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8, c4, c8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8, c4, c8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8, c4, c8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8, c8, c8},
      /* c4 */ {c4, c4, c4, c4, c4, c4, c4, c4, c4, c8, c4, c8},
      /* c8 */ {c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8, c8},
  };
  return kTable[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace opd
