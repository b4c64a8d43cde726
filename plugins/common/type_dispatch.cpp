#include "common/type_dispatch.h"

#include "opd/error.h"

namespace opd::common {

void throw_not_implemented_for(std::string_view name, ScalarType dtype) {
  throw TypeError(fmt::format("\"{}\" not implemented for '{}'", name, to_string(dtype)));
}

void check_dtype_in(std::string_view name, ScalarType dtype, TypeSet set) {
  bool in = false;
  switch (set) {
    case TypeSet::Floating:
      in = dtype == ScalarType::Float32 || dtype == ScalarType::Float64;
      break;
    case TypeSet::Integral:
      in = dtype == ScalarType::UInt8 || dtype == ScalarType::Int32 || dtype == ScalarType::Int64;
      break;
    case TypeSet::AllAndBool:
      in = dtype == ScalarType::Bool;
      [[fallthrough]];
    case TypeSet::All:
      in = in || dtype == ScalarType::UInt8 || dtype == ScalarType::Int32 ||
           dtype == ScalarType::Int64 || dtype == ScalarType::Float32 ||
           dtype == ScalarType::Float64;
      break;
    case TypeSet::Every:
      in = dtype != ScalarType::Undefined;
      break;
  }
  if (!in) throw_not_implemented_for(name, dtype);
}

void check_scalar_fits(const Scalar& value, ScalarType dtype) {
  OPD_DISPATCH_EVERY_TYPE(dtype, "check_scalar_fits", [&] { scalar_to<scalar_t>(value); });
}

}  // namespace opd::common
