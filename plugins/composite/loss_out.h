#pragma once

// The out= forms of the losses (plugins/composite/loss_*.cpp): the functional result, which must
// cast to out's dtype ("result type Float can't be cast to the desired output type Long"),
// written into `out`, resized by resize_output (with its warning when out had elements).

#include <string_view>

#include "common/output.h"
#include "common/type_promotion.h"
#include "opd/error.h"
#include "opd/tensor.h"

namespace opd::native::loss {

inline Tensor& write_result(std::string_view op, const Tensor& result, Tensor& out) {
  OPD_CHECK(common::can_cast(result.scalar_type(), out.scalar_type()),
            "result type {} can't be cast to the desired output type {}", result.scalar_type(),
            out.scalar_type());
  common::resize_output(op, out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace opd::native::loss
