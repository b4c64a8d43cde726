// The out= forms of maximum, minimum and where.self, CompositeExplicitAutograd: the functional
// form computes a new result, which is written into `out` as PyTorch's out= kernels write
// theirs (PyTorch 1.13 has maximum.out and minimum.out structured, where.self_out a kernel of
// its own; their results agree).

#include "common/output.h"
#include "common/type_promotion.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// out = result: the result's dtype must cast to out's ("result type Float can't be cast to the
// desired output type Long"); an out of another shape is resized (with resize_output's warning
// when it had elements) and then laid out as the new result is (TensorIterator's layout, which
// follows the inputs'), as a resized out= tensor is in PyTorch.
Tensor& write_out(std::string_view op, const Tensor& result, Tensor& out) {
  OPD_CHECK(common::can_cast(result.scalar_type(), out.scalar_type()),
            "result type {} can't be cast to the desired output type {}", result.scalar_type(),
            out.scalar_type());
  if (common::resize_output(op, out, result.sizes())) {
    out.unsafe_get_impl()->set_sizes_and_strides(result.sizes(), result.strides(),
                                                 out.storage_offset());
  }
  out.copy_(result);
  return out;
}

}  // namespace

Tensor& maximum_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return write_out("maximum", opd::maximum(self, other), out);
}

Tensor& minimum_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return write_out("minimum", opd::minimum(self, other), out);
}

Tensor& where_self_out(const Tensor& condition, const Tensor& self, const Tensor& other,
                       Tensor& out) {
  return write_out("where", opd::where(condition, self, other), out);
}

}  // namespace opd::native
