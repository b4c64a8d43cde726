#pragma once

#include <string>
#include <vector>

#include "opd/function_schema.h"

namespace opd::gen {

// The C++ side of a schema, as tools/gen/README.md's table gives it.

// The parameter type of an argument ("const Tensor&", "IntArrayRef", "std::optional<int64_t>").
// Throws opd::Error naming the operator and argument for a type the table does not cover.
std::string cpp_argument_type(const FunctionSchema& s, const Argument& a);
// The C++ return type: "Tensor", "Tensor&", "std::tuple<Tensor, Tensor>", "Scalar", "void".
std::string cpp_return_type(const FunctionSchema& s);
// The schema default as a C++ default argument ("1", "std::nullopt", "{}", "\"none\"",
// "MemoryFormat::Contiguous"); empty when the argument has none.
std::string cpp_default(const FunctionSchema& s, const Argument& a);

// One C++ parameter: its type, name, and default ("" for none).
struct Param {
  std::string type;
  std::string name;
  std::string default_value;
};

// The parameters in schema order, defaults included.
std::vector<Param> cpp_params(const FunctionSchema& s);
// "const Tensor& self, const Tensor& other, const Scalar& alpha = 1" (defaults only when
// `with_defaults`), and the types alone "const Tensor&, const Tensor&, const Scalar&".
std::string param_list(const std::vector<Param>& params, bool with_defaults);
std::string type_list(const std::vector<Param>& params);
std::string name_list(const std::vector<Param>& params);

// A C++ identifier for a schema name (an identifier, as the schema parser reads them):
// "default" and every other C++ keyword get a trailing '_'.
std::string cpp_name(const std::string& name);

}  // namespace opd::gen
