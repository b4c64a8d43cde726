#include <nlohmann/json.hpp>

#include "opd/function_schema.h"

namespace opd {

namespace {

// ordered_json keeps the keys in the documented order rather than sorting them.
using Json = nlohmann::ordered_json;

Json alias_to_json(const AliasInfo& alias) {
  Json j;
  j["before_set"] = alias.before_set;
  j["after_set"] = alias.after_set;
  j["is_write"] = alias.is_write;
  if (!alias.contained.empty()) {
    Json contained = Json::array();
    for (const AliasInfo& c : alias.contained) contained.push_back(alias_to_json(c));
    j["contained"] = std::move(contained);
  }
  return j;
}

Json argument_to_json(const Argument& arg) {
  Json j;
  j["name"] = arg.name();
  j["type"] = arg.type()->str();
  if (arg.N()) j["N"] = *arg.N();
  if (arg.default_value()) j["default"] = arg.default_value_text();
  j["kwarg_only"] = arg.kwarg_only();
  if (arg.alias_info() != nullptr) j["alias"] = alias_to_json(*arg.alias_info());
  return j;
}

Json arguments_to_json(const std::vector<Argument>& args) {
  Json list = Json::array();
  for (const Argument& arg : args) list.push_back(argument_to_json(arg));
  return list;
}

}  // namespace

std::string schema_to_json(const FunctionSchema& schema) {
  Json j;
  j["name"] = schema.name();
  j["overload"] = schema.overload_name();
  j["arguments"] = arguments_to_json(schema.arguments());
  j["returns"] = arguments_to_json(schema.returns());
  j["is_vararg"] = schema.is_vararg();
  j["is_varret"] = schema.is_varret();
  // Everything printed is ASCII; replacing invalid UTF-8 only guards programmatic names.
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace opd
