#include "cpp_types.h"

#include <fmt/format.h>

#include "formula_text.h"
#include "opd/error.h"

namespace opd::gen {
namespace {

[[noreturn]] void unsupported(const FunctionSchema& s, const std::string& what) {
  throw Error(
      fmt::format("{}: opd-gen has no C++ type for {}", s.operator_name().to_string(), what));
}

// The C++ type of a plain (non-optional, non-list) schema type.
std::string base_type(TypeKind k) {
  switch (k) {
    case TypeKind::Int:
    case TypeKind::SymInt:
      return "int64_t";
    case TypeKind::Float:
      return "double";
    case TypeKind::Bool:
      return "bool";
    case TypeKind::Str:
      return "std::string_view";
    case TypeKind::ScalarType:
      return "ScalarType";
    case TypeKind::Layout:
      return "Layout";
    case TypeKind::Device:
      return "Device";
    case TypeKind::MemoryFormat:
      return "MemoryFormat";
    default:
      return "";
  }
}

bool is_int_list(const Type& t) {
  return t.kind() == TypeKind::List && (t.contained()[0]->kind() == TypeKind::Int ||
                                        t.contained()[0]->kind() == TypeKind::SymInt);
}

}  // namespace

std::string cpp_argument_type(const FunctionSchema& s, const Argument& a) {
  const Type& t = *a.type();
  const std::string where = fmt::format("argument '{}' of type {}", a.name(), t.str());
  switch (t.kind()) {
    case TypeKind::Tensor:
      return a.is_write() ? "Tensor&" : "const Tensor&";
    case TypeKind::Scalar:
      return "const Scalar&";
    case TypeKind::List:
      if (is_int_list(t)) return "IntArrayRef";
      // bool[N] (the output_mask of the backward operators), as PyTorch's std::array<bool,N>.
      if (t.contained()[0]->kind() == TypeKind::Bool && a.N()) {
        return fmt::format("std::array<bool, {}>", *a.N());
      }
      if (t.contained()[0]->kind() == TypeKind::Tensor && !a.is_write()) return "TensorList";
      // Tensor?[] (index.Tensor's indices), as the dispatcher boxes it.
      if (t.contained()[0]->kind() == TypeKind::Optional &&
          t.contained()[0]->contained()[0]->kind() == TypeKind::Tensor && !a.is_write()) {
        return "const std::vector<std::optional<Tensor>>&";
      }
      unsupported(s, where);
    case TypeKind::Optional: {
      const Type& e = *t.contained()[0];
      if (e.kind() == TypeKind::Tensor) return "const std::optional<Tensor>&";
      if (e.kind() == TypeKind::Scalar) return "const std::optional<Scalar>&";
      if (is_int_list(e)) return "OptionalIntArrayRef";
      if (e.kind() == TypeKind::Generator) return "const std::optional<Generator>&";
      std::string b = base_type(e.kind());
      if (b.empty()) unsupported(s, where);
      return "std::optional<" + b + ">";
    }
    default: {
      std::string b = base_type(t.kind());
      if (b.empty()) unsupported(s, where);
      return b;
    }
  }
}

std::string cpp_return_type(const FunctionSchema& s) {
  const auto& rets = s.returns();
  auto one = [&](const Argument& r) -> std::string {
    switch (r.type()->kind()) {
      case TypeKind::Tensor:
        return r.is_write() ? "Tensor&" : "Tensor";
      case TypeKind::Scalar:
        return "Scalar";
      case TypeKind::List:
        if (r.type()->contained()[0]->kind() == TypeKind::Tensor) return "std::vector<Tensor>";
        break;
      default: {
        std::string b = base_type(r.type()->kind());
        if (!b.empty() && b != "std::string_view") return b;
      }
    }
    unsupported(s, "return type " + r.type()->str());
  };
  if (rets.empty()) return "void";
  if (rets.size() == 1) return one(rets[0]);
  std::string out = "std::tuple<";
  for (size_t i = 0; i < rets.size(); ++i) out += (i ? ", " : "") + one(rets[i]);
  return out + ">";
}

std::string cpp_default(const FunctionSchema& s, const Argument& a) {
  if (!a.default_value()) return "";
  const DefaultValue& d = *a.default_value();
  const Type& t = *a.type();
  switch (d.kind()) {
    case DefaultValue::Kind::None:
      return "std::nullopt";
    case DefaultValue::Kind::Bool:
      return d.as_bool() ? "true" : "false";
    case DefaultValue::Kind::Int:
      if (t.kind() == TypeKind::List) {
        // "int[2] stride=1" repeats the value N times.
        std::string out = "{";
        for (int64_t i = 0; i < a.N().value_or(1); ++i)
          out += (i ? ", " : "") + fmt::to_string(d.as_int());
        return out + "}";
      }
      return fmt::to_string(d.as_int());
    case DefaultValue::Kind::Float: {
      std::string text = fmt::format("{}", d.as_float());
      if (text.find_first_of(".en") == std::string::npos) text += ".0";
      return text;
    }
    case DefaultValue::Kind::String:
      // Quoted and escaped (PyTorch's printQuotedString, a valid C++ literal): the value is
      // the YAML's, and a '"' or a newline in it must not end the literal.
      return d.to_string();
    case DefaultValue::Kind::Identifier: {
      const std::string& n = d.as_string();
      if (n == "Mean") return "1";
      if (n == "Sum") return "2";
      if (n == "contiguous_format") return "MemoryFormat::Contiguous";
      if (n == "preserve_format") return "MemoryFormat::Preserve";
      if (n == "strided") return "Layout::Strided";
      if (n == "long") return "ScalarType::Int64";
      if (n == "float") return "ScalarType::Float32";
      if (n == "double") return "ScalarType::Float64";
      unsupported(s, fmt::format("the default '{}' of argument '{}'", n, a.name()));
    }
    case DefaultValue::Kind::List: {
      std::string out = "{";
      const auto& items = d.as_list();
      for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i].to_string();
      return out + "}";
    }
    case DefaultValue::Kind::Complex:
      break;
  }
  unsupported(s, fmt::format("the default of argument '{}'", a.name()));
}

std::string cpp_name(const std::string& name) { return is_cpp_keyword(name) ? name + "_" : name; }

std::vector<Param> cpp_params(const FunctionSchema& s) {
  std::vector<Param> out;
  for (const Argument& a : s.arguments()) {
    out.push_back({cpp_argument_type(s, a), cpp_name(a.name()), cpp_default(s, a)});
  }
  return out;
}

std::string param_list(const std::vector<Param>& params, bool with_defaults) {
  // C++ allows defaults only on a trailing run of parameters.
  size_t first_default = params.size();
  while (with_defaults && first_default > 0 && !params[first_default - 1].default_value.empty()) {
    --first_default;
  }
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) {
    out += (i ? ", " : "") + params[i].type + " " + params[i].name;
    if (i >= first_default) out += " = " + params[i].default_value;
  }
  return out;
}

std::string type_list(const std::vector<Param>& params) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i].type;
  return out;
}

std::string name_list(const std::vector<Param>& params) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i].name;
  return out;
}

}  // namespace opd::gen
