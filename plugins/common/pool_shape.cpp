#include "common/pool_shape.h"

#include <string>

#include "common/output.h"
#include "common/type_dispatch.h"
#include "common/type_meta_name.h"
#include "opd/error.h"
#include "opd/ops.h"

namespace opd::common {

namespace {

// PyTorch's div_rtn: division rounding toward negative infinity.
int64_t div_rtn(int64_t x, int64_t y) {
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
  return q;
}

// PyTorch's pool2d_shape_check: the kernel, stride, dilation and input checks, then the output
// size's.
void pool2d_shape_check(const Tensor& input, const Pool2dShape& s) {
  OPD_CHECK(s.kw > 0 && s.kh > 0, "kernel size should be greater than zero, but got kH: {} kW: {}",
            s.kh, s.kw);
  OPD_CHECK(s.sw > 0 && s.sh > 0, "stride should be greater than zero, but got dH: {} dW: {}", s.sh,
            s.sw);
  OPD_CHECK(s.dh > 0 && s.dw > 0,
            "dilation should be greater than zero, but got dilationH: {} dilationW: {}", s.dh,
            s.dw);
  const int64_t ndim = input.dim();
  const bool valid_dims = input.size(1) != 0 && input.size(2) != 0;
  if (s.channels_last) {
    OPD_CHECK(ndim == 4 && valid_dims && input.size(3) != 0,
              "Expected 4D (batch mode) tensor expected for input with channels_last layout with "
              "optional 0 dim batch size for input, but got: {}",
              shape_str(input.sizes()));
  } else {
    OPD_CHECK((ndim == 3 && input.size(0) != 0 && valid_dims) ||
                  (ndim == 4 && valid_dims && input.size(3) != 0),
              "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
              "got:{}",
              shape_str(input.sizes()));
  }
  OPD_CHECK(s.kw / 2 >= s.pw && s.kh / 2 >= s.ph,
            "pad should be smaller than or equal to half of kernel size, but got padW = {}, padH = "
            "{}, kW = {}, kH = {}",
            s.pw, s.ph, s.kw, s.kh);
  OPD_CHECK(s.out_w >= 1 && s.out_h >= 1,
            "Given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size is too "
            "small",
            s.channels, s.in_h, s.in_w, s.channels, s.out_h, s.out_w);
}

// The kernel_size, stride and padding (and dilation) of max_pool2d / avg_pool2d, each one or two
// ints; `op` names the operator in the texts, which differ slightly between the two (PyTorch's).
void read_window(const char* op, Pool2dShape& s, IntArrayRef kernel_size, IntArrayRef stride,
                 IntArrayRef padding, const char* padding_text) {
  OPD_CHECK(kernel_size.size() == 1 || kernel_size.size() == 2,
            "{}: kernel_size must either be a single int, or a tuple of two ints", op);
  s.kh = kernel_size[0];
  s.kw = kernel_size.size() == 1 ? s.kh : kernel_size[1];
  OPD_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 2,
            "{}: stride must either be omitted, a single int, or a tuple of two ints", op);
  s.sh = stride.empty() ? s.kh : stride[0];
  s.sw = stride.empty() ? s.kw : stride.size() == 1 ? s.sh : stride[1];
  OPD_CHECK(padding.size() == 1 || padding.size() == 2, "{}: padding must {}", op, padding_text);
  s.ph = padding[0];
  s.pw = padding.size() == 1 ? s.ph : padding[1];
}

// The sizes after the window is known: the input's planes, the output's, and the layout.
void finish_shape(const Tensor& self, Pool2dShape& s, bool ceil_mode) {
  s.batch = self.dim() == 4 ? self.size(-4) : 1;
  s.channels = self.size(-3);
  s.in_h = self.size(-2);
  s.in_w = self.size(-1);
  s.out_h = pooling_output_size(s.in_h, s.kh, s.ph, s.sh, s.dh, ceil_mode);
  s.out_w = pooling_output_size(s.in_w, s.kw, s.pw, s.sw, s.dw, ceil_mode);
  if (self.dim() == 3)
    s.out_sizes = {s.channels, s.out_h, s.out_w};
  else
    s.out_sizes = {s.batch, s.channels, s.out_h, s.out_w};
}

void check_dim_size(const Tensor& t, int64_t dim, int64_t dim_size, int64_t size) {
  OPD_CHECK(t.dim() == dim && t.size(dim_size) == size,
            "Expected a tensor of dimension {} and tensor.size[{}] == {} but got: dimension {} and "
            "tensor.size[{}] = {}",
            dim, dim_size, size, t.dim(), dim_size, t.size(dim_size));
}

}  // namespace

bool is_channels_last_2d(const Tensor& t) {
  if (t.dim() != 4) return false;
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : {1, 3, 2, 0}) {
    if (sizes[d] == 0) return false;
    if (strides[d] < min) return false;
    // N111 and NC11 tensors are both layouts; PyTorch calls them contiguous.
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}

int64_t pooling_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                            bool ceil_mode) {
  OPD_CHECK(stride != 0, "stride should not be zero");
  OPD_CHECK(pad >= 0, "pad must be non-negative, but got pad: {}", pad);
  OPD_CHECK(pad <= k / 2,
            "pad should be at most half of kernel size, but got pad={} and kernel_size={}", pad, k);
  int64_t out =
      div_rtn(in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  // The last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

Pool2dShape max_pool2d_shape(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Pool2dShape s;
  read_window("max_pool2d", s, kernel_size, stride, padding,
              "be either be a single int, or a tuple of two ints");
  OPD_CHECK(dilation.size() == 1 || dilation.size() == 2,
            "max_pool2d: dilation must be either a single int, or a tuple of two ints");
  s.dh = dilation[0];
  s.dw = dilation.size() == 1 ? s.dh : dilation[1];
  s.channels_last = is_channels_last_2d(self);
  OPD_CHECK(s.channels_last || self.dim() == 3 || self.dim() == 4,
            "non-empty 3D or 4D (batch mode) tensor expected for input");
  finish_shape(self, s, ceil_mode);
  pool2d_shape_check(self, s);
  check_dtype_in("max_pool2d", self.scalar_type(), TypeSet::Floating.with(kBFloat16));
  return s;
}

Pool2dShape avg_pool2d_shape(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                             IntArrayRef padding, bool ceil_mode,
                             std::optional<int64_t> divisor_override) {
  Pool2dShape s;
  read_window("avg_pool2d", s, kernel_size, stride, padding,
              "either be a single int, or a tuple of two ints");
  OPD_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  s.channels_last = is_channels_last_2d(self);
  finish_shape(self, s, ceil_mode);
  pool2d_shape_check(self, s);
  check_dtype_in("avg_pool2d", self.scalar_type(), TypeSet::Floating.with(kBFloat16, kLong));
  return s;
}

void check_pool2d_backward(const Pool2dShape& s, const Tensor& self, const Tensor& grad_output,
                           const Tensor* indices) {
  const int64_t ndim = self.dim();
  for (const Tensor* t : {&grad_output, indices}) {
    if (t == nullptr) continue;
    check_dim_size(*t, ndim, ndim - 3, s.channels);
    check_dim_size(*t, ndim, ndim - 2, s.out_h);
    check_dim_size(*t, ndim, ndim - 1, s.out_w);
  }
  OPD_CHECK(self.scalar_type() == grad_output.scalar_type(),
            "expected dtype {} for `gradOutput` but got dtype {}",
            type_meta_name(self.scalar_type()), type_meta_name(grad_output.scalar_type()));
  if (indices != nullptr)
    OPD_CHECK(indices->scalar_type() == kLong,
              "expected dtype long int for `indices` but got dtype {}",
              type_meta_name(indices->scalar_type()));
}

Pool2dShape adaptive_avg_pool2d_shape(const Tensor& self, IntArrayRef output_size) {
  OPD_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  const int64_t ndim = self.dim();
  OPD_CHECK(ndim == 3 || ndim == 4, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}",
            shape_str(self.sizes()));
  for (int64_t i : {-2, -1}) {
    OPD_CHECK(self.size(i) > 0,
              "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
              "dimensions, but input has sizes {} with dimension {} being empty",
              shape_str(self.sizes()), i + ndim);
  }
  OPD_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
            "received {{{}, {}}}",
            output_size[0], output_size[1]);
  check_dtype_in("adaptive_avg_pool2d", self.scalar_type(), TypeSet::Floating.with(kBFloat16));
  Pool2dShape s;
  s.batch = ndim == 4 ? self.size(0) : 1;
  s.channels = self.size(-3);
  s.in_h = self.size(-2);
  s.in_w = self.size(-1);
  s.out_h = output_size[0];
  s.out_w = output_size[1];
  s.channels_last = is_channels_last_2d(self);
  if (ndim == 3)
    s.out_sizes = {s.channels, s.out_h, s.out_w};
  else
    s.out_sizes = {s.batch, s.channels, s.out_h, s.out_w};
  return s;
}

Pool2dShape adaptive_avg_pool2d_backward_shape(const Tensor& grad_output, const Tensor& self) {
  const int64_t ndim = grad_output.dim();
  for (int64_t i = 1; i < ndim; ++i) {
    OPD_CHECK(grad_output.size(i) > 0,
              "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for "
              "non-batch dimensions, but grad_output has sizes {} with dimension {} being empty",
              shape_str(grad_output.sizes()), i);
  }
  OPD_CHECK(ndim == 3 || ndim == 4,
            "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got {}",
            shape_str(self.sizes()));
  OPD_CHECK(self.scalar_type() == grad_output.scalar_type(),
            "expected dtype {} for `grad_output` but got dtype {}",
            type_meta_name(self.scalar_type()), type_meta_name(grad_output.scalar_type()));
  OPD_CHECK(
      self.dim() == ndim && self.size(-3) == grad_output.size(-3) &&
          (ndim == 3 || self.size(0) == grad_output.size(0)),
      "adaptive_avg_pool2d_backward(): grad_output of sizes {} does not match self of sizes {}",
      shape_str(grad_output.sizes()), shape_str(self.sizes()));
  check_dtype_in("adaptive_avg_pool2d_backward_cpu", self.scalar_type(),
                 TypeSet::Floating.with(kBFloat16));
  Pool2dShape s;
  s.batch = ndim == 4 ? self.size(0) : 1;
  s.channels = self.size(-3);
  s.in_h = self.size(-2);
  s.in_w = self.size(-1);
  s.out_h = grad_output.size(-2);
  s.out_w = grad_output.size(-1);
  s.channels_last = is_channels_last_2d(self);
  s.out_sizes = self.sizes().vec();
  return s;
}

Tensor pool_output(IntArrayRef sizes, ScalarType dtype, Device device, bool channels_last) {
  if (!channels_last || sizes.size() != 4) return empty_output(sizes, dtype, device);
  const std::vector<int64_t> nhwc{sizes[0], sizes[2], sizes[3], sizes[1]};
  const std::vector<int64_t> to_nchw{0, 3, 1, 2};
  return empty_output(nhwc, dtype, device).permute(to_nchw);
}

}  // namespace opd::common
