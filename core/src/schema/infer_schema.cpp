#include "schema/infer_schema.h"

#include <fmt/format.h>

#include "opd/error.h"

namespace opd {
namespace {

// SymInt is int to a C++ kernel; fixed sizes (int[2]) live on the argument, not the type.
bool same_type_for_kernels(const Type& a, const Type& b) {
  auto norm = [](TypeKind k) { return k == TypeKind::SymInt ? TypeKind::Int : k; };
  if (norm(a.kind()) != norm(b.kind())) return false;
  const auto& ac = a.contained();
  const auto& bc = b.contained();
  if (ac.size() != bc.size()) return false;
  for (size_t i = 0; i < ac.size(); ++i) {
    if (!same_type_for_kernels(*ac[i], *bc[i])) return false;
  }
  return a.kind() != TypeKind::Var && a.kind() != TypeKind::Class ? true : a.name() == b.name();
}

}  // namespace

std::optional<std::string> find_schema_differences(const FunctionSchema& declared,
                                                   const FunctionSchema& inferred) {
  const auto& da = declared.arguments();
  const auto& ia = inferred.arguments();
  if (da.size() != ia.size()) {
    return fmt::format("The number of arguments is different. {} vs {}.", da.size(), ia.size());
  }
  const auto& dr = declared.returns();
  const auto& ir = inferred.returns();
  if (dr.size() != ir.size()) {
    return fmt::format("The number of returns is different. {} vs {}.", dr.size(), ir.size());
  }
  for (size_t i = 0; i < da.size(); ++i) {
    if (!same_type_for_kernels(*da[i].type(), *ia[i].type())) {
      return fmt::format("Type mismatch in argument {}: {} vs {}.", i + 1, da[i].type()->str(),
                         ia[i].type()->str());
    }
  }
  for (size_t i = 0; i < dr.size(); ++i) {
    if (!same_type_for_kernels(*dr[i].type(), *ir[i].type())) {
      return fmt::format("Type mismatch in return {}: {} vs {}.", i + 1, dr[i].type()->str(),
                         ir[i].type()->str());
    }
  }
  return std::nullopt;
}

void check_inferred_schema(const FunctionSchema& declared, const std::string& declared_debug,
                           const FunctionSchema& inferred, const std::string& inferred_debug) {
  auto reason = find_schema_differences(declared, inferred);
  if (!reason) return;
  throw Error(fmt::format(
      "Inferred operator schema for a C++ kernel function doesn't match the expected function "
      "schema.\n  operator: {}\n  expected schema: {}\n    {}\n  inferred schema: {}\n    {}\n  "
      "reason: {}",
      declared.operator_name().to_string(), declared.to_string(), declared_debug,
      inferred.to_string(), inferred_debug, *reason));
}

}  // namespace opd
