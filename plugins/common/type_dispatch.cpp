#include "common/type_dispatch.h"

#include "opd/error.h"

namespace opd::common {

void throw_not_implemented_for(std::string_view name, ScalarType dtype) {
  throw Error(fmt::format("\"{}\" not implemented for '{}'", name, to_string(dtype)));
}

void check_dtype_in(std::string_view name, ScalarType dtype, TypeSet set) {
  if (!set.contains(dtype)) throw_not_implemented_for(name, dtype);
}

void check_scalar_fits(const Scalar& value, ScalarType dtype) {
  // Scalar::to's overflow is a ValueError (the Python argument parser's conversions want it);
  // a kernel argument that does not fit its tensor's dtype is PyTorch's RuntimeError.
  try {
    OPD_DISPATCH_EVERY_TYPE(dtype, "check_scalar_fits", [&] { scalar_to<scalar_t>(value); });
  } catch (const ValueError& e) {
    throw Error(e.msg());
  }
}

}  // namespace opd::common
