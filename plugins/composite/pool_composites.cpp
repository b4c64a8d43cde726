// The pooling front operators, composed as PyTorch 1.13 composes them (aten/src/ATen/native/
// Pooling.cpp, AdaptiveAveragePooling.cpp): max_pool2d over max_pool2d_with_indices, the 1-D
// poolings over the 2-D ones on an unsqueezed height of 1, adaptive_avg_pool2d over
// _adaptive_avg_pool2d (or a mean for a 1x1 output).

#include <tuple>
#include <vector>

#include "common/output.h"
#include "common/pool_shape.h"
#include "common/type_dispatch.h"
#include "opd/autograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// PyTorch's checkDimRange(op, self, 2, 4): a 2-D or 3-D input.
void check_1d_input(const char* op, const Tensor& self) {
  OPD_CHECK(self.dim() >= 2 && self.dim() < 4,
            "Expected 2 to 3 dimensions, but got {}-dimensional tensor for argument #1 'self' "
            "(while checking arguments for {})",
            self.dim(), op);
}

// PyTorch's check1d: an int[1] argument holds one int.
void check_1d(const char* op, const char* arg, IntArrayRef values) {
  OPD_CHECK(values.size() == 1, "{}() argument '{}' should contain one int (got {})", op, arg,
            values.size());
}

// PyTorch's check_max_pool1d, the checks max_pool1d makes before it pools; returns the output
// width.
int64_t check_max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  OPD_CHECK(kernel_size.size() == 1,
            "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but "
            "got size {}",
            kernel_size.size());
  OPD_CHECK(stride.empty() || stride.size() == 1,
            "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 "
            "but got size {}",
            stride.size());
  OPD_CHECK(padding.size() == 1,
            "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got "
            "size {}",
            padding.size());
  OPD_CHECK(dilation.size() == 1,
            "max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got "
            "size {}",
            dilation.size());
  const int64_t k = kernel_size[0], s = stride.empty() ? k : stride[0], p = padding[0],
                d = dilation[0];
  OPD_CHECK(k > 0, "max_pool1d() kernel_size must be greater than zero, but got {}", k);
  OPD_CHECK(s > 0, "max_pool1d() stride must be greater than zero, but got {}", s);
  OPD_CHECK(p >= 0, "max_pool1d() padding must be non-negative, but got {}", p);
  OPD_CHECK(p <= k / 2,
            "max_pool1d() padding should be at most half of kernel size, but got padding={} and "
            "kernel_size={}",
            p, k);
  OPD_CHECK(d > 0, "max_pool1d() dilation must be greater than zero, but got {}", d);
  const int64_t ow = common::pooling_output_size(self.size(-1), k, p, s, d, ceil_mode);
  OPD_CHECK(ow >= 0, "max_pool1d() Invalid computed output size: {}", ow);
  return ow;
}

}  // namespace

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(
      opd::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  if (stride.empty()) stride = kernel_size;
  check_1d_input("max_pool1d", self);
  check_1d("max_pool1d", "kernel_size", kernel_size);
  check_1d("max_pool1d", "stride", stride);
  check_1d("max_pool1d", "padding", padding);
  check_1d("max_pool1d", "dilation", dilation);
  const std::vector<int64_t> k{1, kernel_size[0]}, s{1, stride[0]}, p{0, padding[0]},
      d{1, dilation[0]};
  auto [out, indices] = opd::max_pool2d_with_indices(self.unsqueeze(-2), k, s, p, d, ceil_mode);
  return {out.squeeze(-2), indices.squeeze(-2)};
}

Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const int64_t ndim = self.dim();
  OPD_CHECK((ndim == 2 && self.size(0) != 0 && self.size(1) != 0) ||
                (ndim == 3 && self.size(1) != 0 && self.size(2) != 0),
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
            "input, but got:{}",
            common::shape_str(self.sizes()));
  const int64_t ow = check_max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode);
  common::check_dtype_in("max_pool1d_impl", self.scalar_type(),
                         common::TypeSet::Floating.with(kBFloat16));
  if (ow == 0) {
    // PyTorch's own 1-D kernel (taken without autograd) gives an empty result here.
    std::vector<int64_t> sizes = self.sizes().vec();
    sizes.back() = 0;
    return opd::empty(sizes, TensorOptions().dtype(self.scalar_type()).device(self.device()));
  }
  Tensor out = std::get<0>(
      opd::max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
  // Without autograd PyTorch runs its own 1-D kernel, whose result is contiguous.
  if (self.requires_grad() && opd::is_grad_enabled()) return out;
  return out.contiguous();
}

Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  if (stride.empty()) stride = kernel_size;
  check_1d_input("avg_pool1d", self);
  check_1d("avg_pool1d", "kernel_size", kernel_size);
  check_1d("avg_pool1d", "stride", stride);
  check_1d("avg_pool1d", "padding", padding);
  const std::vector<int64_t> k{1, kernel_size[0]}, s{1, stride[0]}, p{0, padding[0]};
  return opd::avg_pool2d(self.unsqueeze(-2), k, s, p, ceil_mode, count_include_pad, std::nullopt)
      .squeeze(-2);
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  OPD_CHECK(output_size.size() == 2, "adaptive_avg_pool2d: output_size must be 2");
  OPD_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
            "received {{{}, {}}}",
            output_size[0], output_size[1]);
  if (output_size[0] == 1 && output_size[1] == 1) {
    // A 1x1 output is the mean over the plane, as PyTorch computes it, with the input's layout.
    const std::vector<int64_t> dims{-1, -2};
    Tensor out = self.mean(IntArrayRef(dims), true);
    if (common::is_channels_last_2d(self)) {
      const int64_t n = self.size(0), c = self.size(1);
      const std::vector<int64_t> sizes{n, c, 1, 1}, strides{c, 1, c, c};
      out = out.as_strided(sizes, strides);
    }
    return out;
  }
  return opd::_adaptive_avg_pool2d(self, output_size);
}

Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size) {
  check_1d_input("adaptive_avg_pool1d", self);
  check_1d("adaptive_avg_pool1d", "output_size", output_size);
  const std::vector<int64_t> sizes{1, output_size[0]};
  return opd::adaptive_avg_pool2d(self.unsqueeze(-2), sizes).squeeze(-2);
}

}  // namespace opd::native
