#include "common/pad_shape.h"

#include "common/output.h"
#include "common/type_dispatch.h"
#include "opd/error.h"

namespace opd::common {

namespace {

const char* op_name(PadMode mode, int dims) {
  if (mode == PadMode::Reflect) return dims == 1 ? "reflection_pad1d" : "reflection_pad2d";
  return dims == 1 ? "replication_pad1d" : "replication_pad2d";
}

// PyTorch's padding::check_valid_input<dims>: the padding's length, then a (dims+1)-D input of
// non-empty sizes or a (dims+2)-D one whose batch alone may be empty.
void check_valid_input(int dims, const Tensor& input, IntArrayRef padding) {
  OPD_CHECK(static_cast<int64_t>(padding.size()) == 2 * dims, "padding size is expected to be {}",
            2 * dims);
  const int64_t ndim = input.dim();
  const bool batch_mode = ndim == dims + 2;
  bool valid = batch_mode || ndim == dims + 1;
  for (int64_t d = batch_mode ? 1 : 0; valid && d < ndim; ++d) valid = input.size(d) != 0;
  OPD_CHECK(valid,
            "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero "
            "dimensions for input, but got: {}",
            dims + 1, dims + 2, shape_str(input.sizes()));
}

}  // namespace

PadShape pad_shape(PadMode mode, int dims, const Tensor& self, IntArrayRef padding) {
  const char* op = op_name(mode, dims);
  check_valid_input(dims, self, padding);
  PadShape s;
  const int64_t ndim = self.dim();
  s.pad_l = padding[0];
  const int64_t pad_r = padding[1];
  s.in_w = self.size(-1);
  s.out_w = s.in_w + s.pad_l + pad_r;
  int64_t pad_b = 0;
  if (dims == 2) {
    s.pad_t = padding[2];
    pad_b = padding[3];
    s.in_h = self.size(-2);
    s.out_h = s.in_h + s.pad_t + pad_b;
  }
  if (mode == PadMode::Reflect) {
    OPD_CHECK(s.pad_l < s.in_w && pad_r < s.in_w,
              "Argument #4: Padding size should be less than the corresponding input dimension, "
              "but got: padding ({}, {}) at dimension {} of input {}",
              s.pad_l, pad_r, ndim - 1, dims == 1 ? shape_str(self.sizes()) : std::to_string(ndim));
    if (dims == 2)
      OPD_CHECK(s.pad_t < s.in_h && pad_b < s.in_h,
                "Argument #6: Padding size should be less than the corresponding input dimension, "
                "but got: padding ({}, {}) at dimension {} of input {}",
                s.pad_t, pad_b, ndim - 2, ndim);
  }
  if (dims == 1)
    OPD_CHECK(s.out_w >= 1, "input (W: {}) is too small. Calculated output W: {}", s.in_w, s.out_w);
  else
    OPD_CHECK(s.out_w >= 1 && s.out_h >= 1,
              "input (H: {}, W: {}) is too small. Calculated output H: {} W: {}", s.in_h, s.in_w,
              s.out_h, s.out_w);
  s.out_sizes = self.sizes().vec();
  s.out_sizes.back() = s.out_w;
  if (dims == 2) s.out_sizes[ndim - 2] = s.out_h;
  s.planes = 1;
  for (int64_t d = 0; d < ndim - dims; ++d) s.planes *= self.size(d);
  check_dtype_in(mode == PadMode::Replicate ? std::string(op) + "_cpu" : std::string(op),
                 self.scalar_type(), TypeSet::Floating | TypeSet::Complex);
  return s;
}

PadShape pad_backward_shape(PadMode mode, int dims, const Tensor& grad_output, const Tensor& self,
                            IntArrayRef padding) {
  const PadShape s = pad_shape(mode, dims, self, padding);
  const char* name = mode == PadMode::Reflect && dims == 1 ? "grad_output" : "gradOutput";
  const char* sep = mode == PadMode::Replicate && dims == 1 ? "" : ",";
  OPD_CHECK(grad_output.dim() == self.dim(), "{} dimensions unexpected. Expected: {}, Got: {}",
            name, self.dim(), grad_output.dim());
  OPD_CHECK(grad_output.size(-1) == s.out_w, "{} width unexpected. Expected: {}{} Got: {}", name,
            s.out_w, sep, grad_output.size(-1));
  if (dims == 2)
    OPD_CHECK(grad_output.size(-2) == s.out_h, "{} height unexpected. Expected: {}, Got: {}", name,
              s.out_h, grad_output.size(-2));
  for (int64_t d = 0; d < self.dim() - dims; ++d)
    OPD_CHECK(grad_output.size(d) == self.size(d),
              "{} size unexpected at dimension {}. Expected: {}, Got: {}", name, d, self.size(d),
              grad_output.size(d));
  OPD_CHECK(grad_output.scalar_type() == self.scalar_type(), "expected scalar type {} but found {}",
            to_string(self.scalar_type()), to_string(grad_output.scalar_type()));
  return s;
}

}  // namespace opd::common
