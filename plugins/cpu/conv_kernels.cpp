// CPU kernels of convolution and convolution_backward.
//
// Note [Convolution on the CPU]
// Both operators reduce to the three computations of a non-transposed convolution
// (cpu/conv_backend.h): forward, backward data, backward weights. A transposed convolution of
// x by w is the backward data of the convolution by w whose output is x's shape (the same
// weight tensor, read as (in, out / groups, *)), so its forward is backward data, its input
// gradient the forward of grad_output, and its weight gradient the backward weights with the
// roles of input and grad_output exchanged. Each computation runs through oneDNN for float and
// bfloat16 (conv_dnnl.cpp, PyTorch 1.13's mkldnn path); float64, and any case oneDNN declines
// (a negative right padding from output_padding, a bfloat16 machine without it), run as im2col +
// OpenBLAS gemm (conv_im2col.cpp), bfloat16 through float there. Activations are first brought
// to the layout of the outputs (common::conv_memory_format: channels-last in, channels-last out),
// which oneDNN takes without a reorder; the weights keep theirs.

#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "common/conv_shape.h"
#include "cpu/conv_backend.h"
#include "opd/error.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"

namespace opd::native {
namespace {

using common::ConvParams;
using conv::Geometry;

Geometry geometry(IntArrayRef src, IntArrayRef weight, IntArrayRef dst, const ConvParams& p) {
  Geometry g;
  g.src.assign(src.begin(), src.end());
  g.weight.assign(weight.begin(), weight.end());
  g.dst.assign(dst.begin(), dst.end());
  g.stride = p.stride;
  g.pad_l = p.padding;
  g.dilation = p.dilation;
  g.groups = p.groups;
  for (size_t d = 0; d < p.stride.size(); ++d) {
    const int64_t kernel = (weight[d + 2] - 1) * p.dilation[d] + 1;
    g.pad_r.push_back((dst[d + 2] - 1) * p.stride[d] + kernel - src[d + 2] - p.padding[d]);
  }
  return g;
}

bool empty_case(const Geometry& g) {
  int64_t s = 1, w = 1, d = 1;
  for (int64_t v : g.src) s *= v;
  for (int64_t v : g.weight) w *= v;
  for (int64_t v : g.dst) d *= v;
  return s == 0 || w == 0 || d == 0;
}

// `t`, or a contiguous copy of it.
Tensor dense(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

// Runs `im2col` on contiguous float copies when `out` is bfloat16, on contiguous tensors
// otherwise, and copies the result into `out` when it was not written in place.
template <class Fn>
void im2col_into(const Tensor& out, std::vector<Tensor> ins, Fn im2col) {
  const bool bf16 = out.scalar_type() == kBFloat16;
  for (Tensor& t : ins) t = bf16 ? t.to(kFloat).contiguous() : dense(t);
  Tensor o =
      bf16 || !out.is_contiguous()
          ? opd::empty(
                out.sizes(),
                TensorOptions().dtype(bf16 ? kFloat : out.scalar_type()).device(out.device()))
          : out;
  im2col(ins, o);
  if (!o.is_same(out)) out.copy_(o);
}

void add_bias(const Tensor& out, const Tensor& bias) {
  std::vector<int64_t> shape(static_cast<size_t>(out.dim()), 1);
  shape[1] = bias.numel();
  out.add_(bias.reshape(shape));
}

void run_forward(const Tensor& src, const Tensor& weight, const std::optional<Tensor>& bias,
                 const Tensor& dst, const Geometry& g) {
  const bool has_bias = bias.has_value() && bias->defined();
  if (empty_case(g)) {
    dst.zero_();
    if (has_bias && dst.numel() > 0) add_bias(dst, *bias);
    return;
  }
  const Tensor b = has_bias ? dense(*bias) : Tensor();  // oneDNN reads a dense bias
  if (src.scalar_type() != kDouble && conv::dnnl_supports(g) &&
      conv::dnnl_forward(src, weight, has_bias ? &b : nullptr, dst, g)) {
    return;
  }
  im2col_into(dst, {src, weight}, [&](const std::vector<Tensor>& in, const Tensor& out) {
    conv::im2col_forward(in[0], in[1], out, g);
  });
  if (has_bias) add_bias(dst, *bias);
}

void run_backward_data(const Tensor& diff_dst, const Tensor& weight, const Tensor& diff_src,
                       const Geometry& g) {
  if (empty_case(g)) {
    diff_src.zero_();
    return;
  }
  if (diff_dst.scalar_type() != kDouble && conv::dnnl_supports(g) &&
      conv::dnnl_backward_data(diff_dst, weight, diff_src, g)) {
    return;
  }
  im2col_into(diff_src, {diff_dst, weight}, [&](const std::vector<Tensor>& in, const Tensor& out) {
    conv::im2col_backward_data(in[0], in[1], out, g);
  });
}

// Returns whether diff_bias (when given) was written too.
bool run_backward_weights(const Tensor& src, const Tensor& diff_dst, const Tensor& diff_weight,
                          const Tensor* diff_bias, const Geometry& g) {
  if (empty_case(g)) {
    diff_weight.zero_();
    return false;
  }
  if (src.scalar_type() != kDouble && conv::dnnl_supports(g) &&
      conv::dnnl_backward_weights(src, diff_dst, diff_weight, diff_bias, g)) {
    return true;
  }
  im2col_into(diff_weight, {src, diff_dst}, [&](const std::vector<Tensor>& in, const Tensor& out) {
    conv::im2col_backward_weights(in[0], in[1], out, g);
  });
  return false;
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                   IntArrayRef output_padding, int64_t groups) {
  const ConvParams p = common::conv_check(input, weight, bias, stride, padding, dilation,
                                          transposed, output_padding, groups);
  common::conv_check_dtypes(input, weight, bias);
  common::conv_check_supported_dtype(input.scalar_type(), p);
  const MemoryFormat fmt = common::conv_memory_format(input, weight, transposed);
  const std::vector<int64_t> out_sizes = common::conv_output_size(input.sizes(), weight.sizes(), p);
  Tensor out = common::conv_empty(out_sizes, input, fmt);
  const Tensor x = common::conv_contiguous(input, fmt);
  if (!transposed) {
    run_forward(x, weight, bias, out, geometry(x.sizes(), weight.sizes(), out_sizes, p));
  } else {
    run_backward_data(x, weight, out, geometry(out_sizes, weight.sizes(), x.sizes(), p));
    if (bias.has_value() && bias->defined() && out.numel() > 0) add_bias(out, *bias);
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight,
    OptionalIntArrayRef bias_sizes, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
    bool transposed, IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask) {
  const ConvParams p = common::conv_check(input, weight, std::nullopt, stride, padding, dilation,
                                          transposed, output_padding, groups);
  common::conv_check_backward(grad_output, input, weight, p);
  common::conv_check_supported_dtype(input.scalar_type(), p);
  (void)bias_sizes;
  const MemoryFormat fmt = common::conv_memory_format(input, weight, transposed);
  const Tensor x = common::conv_contiguous(input, fmt);
  const Tensor gy = common::conv_contiguous(grad_output, fmt);
  Tensor gi, gw, gb;
  bool bias_done = false;
  if (output_mask[2])
    gb = common::conv_empty({grad_output.size(1)}, grad_output, MemoryFormat::Contiguous);
  if (!transposed) {
    const Geometry g = geometry(x.sizes(), weight.sizes(), gy.sizes(), p);
    if (output_mask[0]) {
      gi = common::conv_empty(input.sizes(), input, fmt);
      run_backward_data(gy, weight, gi, g);
    }
    if (output_mask[1]) {
      gw = common::conv_empty(weight.sizes(), weight, fmt);
      bias_done = run_backward_weights(x, gy, gw, output_mask[2] ? &gb : nullptr, g);
    }
  } else {
    const Geometry g = geometry(gy.sizes(), weight.sizes(), x.sizes(), p);
    if (output_mask[0]) {
      gi = common::conv_empty(input.sizes(), input, fmt);
      run_forward(gy, weight, std::nullopt, gi, g);
    }
    if (output_mask[1]) {
      gw = common::conv_empty(weight.sizes(), weight, fmt);
      run_backward_weights(gy, x, gw, nullptr, g);
    }
  }
  if (output_mask[2] && !bias_done) {
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < grad_output.dim(); ++d) dims.push_back(d);
    gb.copy_(grad_output.sum(dims));
  }
  return {gi, gw, gb};
}

}  // namespace opd::native
