#pragma once

// The name of a dtype as PyTorch's caffe2::TypeMeta prints it ("float", "long int",
// "c10::BFloat16"), which PyTorch's dtype-mismatch messages use.

#include "opd/scalar_type.h"

namespace opd::common {

const char* type_meta_name(ScalarType t);

}  // namespace opd::common
