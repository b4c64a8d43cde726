#include "common/conv_shape.h"

#include <fmt/format.h>

#include "common/output.h"
#include "opd/error.h"
#include "opd/ops.h"

namespace opd::common {
namespace {

std::vector<int64_t> expand_param(IntArrayRef v, const char* name, int64_t dims) {
  if (v.size() == 1) return std::vector<int64_t>(static_cast<size_t>(dims), v[0]);
  OPD_CHECK(static_cast<int64_t>(v.size()) == dims,
            "expected {} to be a single integer value or a list of {} values to match the "
            "convolution dimensions, but got {}={}",
            name, dims, name, shape_str(v));
  return std::vector<int64_t>(v.begin(), v.end());
}

bool any_of(const std::vector<int64_t>& v, bool (*pred)(int64_t)) {
  for (int64_t x : v) {
    if (pred(x)) return true;
  }
  return false;
}

// PyTorch's Tensor::toString for the CPU dtypes (the legacy type names).
std::string legacy_type_name(ScalarType t) {
  switch (t) {
    case kFloat:
      return "torch.FloatTensor";
    case kDouble:
      return "torch.DoubleTensor";
    case kHalf:
      return "torch.HalfTensor";
    case kLong:
      return "torch.LongTensor";
    case kInt:
      return "torch.IntTensor";
    case kBFloat16:
      return "CPUBFloat16Type";
    default:
      return fmt::format("CPU{}Type", to_string(t));
  }
}

// c10's names of C++ types, as typeMetaToScalarType prints them in "expected scalar type".
std::string cpp_type_name(ScalarType t) {
  switch (t) {
    case kFloat:
      return "float";
    case kDouble:
      return "double";
    case kHalf:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kLong:
      return "long int";
    case kInt:
      return "int";
    default:
      return to_string(t);
  }
}

}  // namespace

ConvParams conv_check(const Tensor& input, const Tensor& weight,
                      const std::optional<Tensor>& bias_opt, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, bool transposed,
                      IntArrayRef output_padding, int64_t groups) {
  const int64_t k = weight.dim();
  const int64_t dims = k - 2;
  OPD_CHECK(dims > 0, "weight should have at least three dimensions");
  OPD_CHECK(groups > 0, "non-positive groups is not supported");
  ConvParams p;
  p.stride = expand_param(stride, "stride", dims);
  p.padding = expand_param(padding, "padding", dims);
  p.dilation = expand_param(dilation, "dilation", dims);
  p.output_padding = expand_param(output_padding, "output_padding", dims);
  p.transposed = transposed;
  p.groups = groups;

  OPD_CHECK(!any_of(p.padding, [](int64_t v) { return v < 0; }),
            "negative padding is not supported");
  OPD_CHECK(!any_of(p.output_padding, [](int64_t v) { return v < 0; }),
            "negative output_padding is not supported");
  OPD_CHECK(!any_of(p.stride, [](int64_t v) { return v <= 0; }),
            "non-positive stride is not supported");
  OPD_CHECK(!any_of(p.dilation, [](int64_t v) { return v <= 0; }),
            "non-positive dilation is not supported");

  const IntArrayRef w = weight.sizes();
  const std::string ws = shape_str(w);
  OPD_CHECK(input.dim() == k,
            "Expected {}-dimensional input for {}-dimensional weight {}, but got {}-dimensional "
            "input of size {} instead",
            k, k, ws, input.dim(), shape_str(input.sizes()));
  OPD_CHECK(w[0] >= groups,
            "Given groups={}, expected weight to be at least {} at dimension 0, but got weight of "
            "size {} instead",
            groups, groups, ws);
  OPD_CHECK(w[0] % groups == 0,
            "Given groups={}, expected weight to be divisible by {} at dimension 0, but got "
            "weight of size [{}] instead",
            groups, groups, ws);
  const bool has_bias = bias_opt.has_value() && bias_opt->defined();
  if (!transposed) {
    OPD_CHECK(input.size(1) == w[1] * groups,
              "Given groups={}, weight of size {}, expected input{} to have {} channels, but got "
              "{} channels instead",
              groups, ws, shape_str(input.sizes()), w[1] * groups, input.size(1));
    OPD_CHECK(!has_bias || (bias_opt->dim() == 1 && bias_opt->size(0) == w[0]),
              "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but "
              "got bias of size {} instead",
              ws, w[0], shape_str(bias_opt->sizes()));
    bool fits = true;
    std::string in_s, k_s;
    for (int64_t i = 2; i < k; ++i) {
      const int64_t padded = input.size(i) + 2 * p.padding[i - 2];
      const int64_t kernel = p.dilation[i - 2] * (w[i] - 1) + 1;
      if (padded < kernel) fits = false;
      in_s += fmt::format("{}{}", i > 2 ? " x " : "", padded);
      k_s += fmt::format("{}{}", i > 2 ? " x " : "", kernel);
    }
    OPD_CHECK(fits,
              "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size "
              "can't be greater than actual input size",
              in_s, k_s);
  } else {
    OPD_CHECK(input.size(1) == w[0],
              "Given transposed=1, weight of size {}, expected input{} to have {} channels, but "
              "got {} channels instead",
              ws, shape_str(input.sizes()), w[0], input.size(1));
    OPD_CHECK(!has_bias || (bias_opt->dim() == 1 && bias_opt->size(0) == w[1] * groups),
              "Given transposed=1, weight of size {}, expected bias to be 1-dimensional with {} "
              "elements, but got bias of size {} instead",
              ws, w[1] * groups, shape_str(bias_opt->sizes()));
    // slow_conv_transpose2d's output size check (1-D runs as 2-D with a height of 1).
    std::string in_s = dims == 1 ? "1" : "", out_s = dims == 1 ? "1" : "";
    bool positive = true;
    for (int64_t d = 0; d < dims; ++d) {
      const int64_t i = input.size(d + 2);
      const int64_t o = (i - 1) * p.stride[d] - 2 * p.padding[d] + p.dilation[d] * (w[d + 2] - 1) +
                        1 + p.output_padding[d];
      positive = positive && o > 0;
      in_s += fmt::format("{}{}", in_s.empty() ? "" : " x ", i);
      out_s += fmt::format("{}{}", out_s.empty() ? "" : " x ", o);
    }
    OPD_CHECK(positive,
              "Given input size per channel: ({}). Calculated output size per channel: ({}). "
              "Output size is too small",
              in_s, out_s);
    if (dims == 2 || dims == 1) {
      // slow_conv_transpose2d's shape check (conv_transpose1d runs as a 2-D one in PyTorch).
      const int64_t oh = p.output_padding[0], ow = p.output_padding[dims - 1];
      const int64_t sh = p.stride[0], sw = p.stride[dims - 1];
      const int64_t dh = p.dilation[0], dw = p.dilation[dims - 1];
      OPD_CHECK((ow < sw || ow < dw) && (oh < sh || oh < dh),
                "output padding must be smaller than either stride or dilation, but got "
                "output_padding_height: {} output_padding_width: {} stride_height: {} "
                "stride_width: {} dilation_height: {} dilation_width: {}",
                oh, ow, sh, sw, dh, dw);
    } else {
      for (int64_t d = 0; d < dims; ++d) {
        OPD_CHECK(p.output_padding[d] < p.stride[d] || p.output_padding[d] < p.dilation[d],
                  "output padding must be smaller than either stride or dilation");
      }
    }
  }
  return p;
}

void conv_check_supported_dtype(ScalarType t, const ConvParams& p) {
  if (t == kFloat || t == kDouble || t == kBFloat16) return;
  const char* name = p.transposed ? (p.dims() == 3 ? "slow_conv_transpose3d_out_cpu"
                                                   : "slow_conv_transpose2d_out_cpu")
                                  : (p.dims() == 3 ? "slow_conv3d_cpu" : "slow_conv2d_cpu");
  OPD_CHECK(false, "\"{}\" not implemented for '{}'", name, to_string(t));
}

void conv_check_dtypes(const Tensor& input, const Tensor& weight,
                       const std::optional<Tensor>& bias) {
  const ScalarType it = input.scalar_type(), wt = weight.scalar_type();
  if (it != wt) {
    OPD_CHECK(it != kFloat && it != kBFloat16,
              "Input type ({}) and weight type ({}) should be the same or input should be a "
              "MKLDNN tensor and weight is a dense tensor",
              legacy_type_name(it), legacy_type_name(wt));
  }
  if (bias.has_value() && bias->defined()) {
    OPD_CHECK(bias->scalar_type() == it, "Input type ({}) and bias type ({}) should be the same",
              cpp_type_name(it), cpp_type_name(bias->scalar_type()));
  }
  OPD_CHECK(it == wt, "expected scalar type {} but found {}", to_string(it), to_string(wt));
}

void conv_check_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                         const ConvParams& p) {
  const std::vector<int64_t> expected = conv_output_size(input.sizes(), weight.sizes(), p);
  OPD_CHECK(grad_output.sizes() == IntArrayRef(expected),
            "convolution_backward: expected grad_output of size {}, but got {}",
            shape_str(expected), shape_str(grad_output.sizes()));
  OPD_CHECK(grad_output.scalar_type() == input.scalar_type() &&
                weight.scalar_type() == input.scalar_type(),
            "expected scalar type {} but found {}", to_string(input.scalar_type()),
            to_string(grad_output.scalar_type() != input.scalar_type() ? grad_output.scalar_type()
                                                                       : weight.scalar_type()));
}

std::vector<int64_t> conv_output_size(IntArrayRef input, IntArrayRef weight, const ConvParams& p) {
  std::vector<int64_t> out{input[0], p.transposed ? weight[1] * p.groups : weight[0]};
  for (int64_t d = 0; d < p.dims(); ++d) {
    const size_t i = static_cast<size_t>(d + 2);
    const int64_t kernel = p.dilation[d] * (weight[i] - 1) + 1;
    if (p.transposed) {
      out.push_back((input[i] - 1) * p.stride[d] - 2 * p.padding[d] + kernel + p.output_padding[d]);
    } else {
      out.push_back((input[i] + 2 * p.padding[d] - kernel) / p.stride[d] + 1);
    }
  }
  return out;
}

namespace {

bool channels_last_strides(IntArrayRef sizes, IntArrayRef strides) {
  // The order of the dimensions from the fastest: C, then the spatial ones backwards, then N.
  std::vector<int64_t> order;
  if (sizes.size() == 4) {
    order = {1, 3, 2, 0};
  } else if (sizes.size() == 5) {
    order = {1, 4, 3, 2, 0};
  } else {
    return false;
  }
  if (strides[1] == 0) return false;
  int64_t min = 0;
  for (int64_t d : order) {
    const size_t i = static_cast<size_t>(d);
    if (sizes[i] == 0) return false;
    if (strides[i] < min) return false;
    // N before C when their strides tie: (N, C, 1, 1) is contiguous, not channels-last.
    if (d == 0 && min == strides[1]) return false;
    min = strides[i];
    if (sizes[i] > 1) min *= sizes[i];
  }
  return true;
}

// A 3-D tensor as PyTorch 1.13's convolution views it for a 1-D convolution: unsqueeze(2).
bool unsqueezed_channels_last(const Tensor& t) {
  const IntArrayRef s = t.sizes(), st = t.strides();
  const std::vector<int64_t> sizes{s[0], s[1], 1, s[2]};
  const std::vector<int64_t> strides{st[0], st[1], s[2] * st[2], st[2]};
  return channels_last_strides(sizes, strides);
}

}  // namespace

bool suggests_channels_last(const Tensor& t) {
  return channels_last_strides(t.sizes(), t.strides());
}

MemoryFormat conv_memory_format(const Tensor& input, const Tensor& weight, bool transposed) {
  if (transposed) return MemoryFormat::Contiguous;
  // A 1-D convolution runs as a 2-D one over unsqueeze(2) views, whose layout follows the
  // weight's alone in 1.13 (an input laid out (N, L, C) still gives a contiguous result).
  if (input.dim() == 3) {
    return unsqueezed_channels_last(weight) ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  }
  if (input.dim() != 4) return MemoryFormat::Contiguous;
  if (!suggests_channels_last(input) && !suggests_channels_last(weight)) {
    return MemoryFormat::Contiguous;
  }
  return MemoryFormat::ChannelsLast;
}

Tensor conv_empty(IntArrayRef sizes, const Tensor& like, MemoryFormat format) {
  if (format == MemoryFormat::Contiguous || sizes.size() < 3) {
    return empty_output(sizes, like.scalar_type(), like.device());
  }
  const TensorOptions options = TensorOptions().dtype(like.scalar_type()).device(like.device());
  if (sizes.size() == 3) {  // (N, C, L) as the squeezed (N, C, 1, L) channels-last tensor
    const std::vector<int64_t> four{sizes[0], sizes[1], 1, sizes[2]};
    return opd::empty(four, options, format).squeeze(2);
  }
  return opd::empty(sizes, options, format);
}

Tensor conv_contiguous(const Tensor& t, MemoryFormat format) {
  if (format == MemoryFormat::Contiguous) return t.contiguous();
  if (t.dim() == 3) return t.unsqueeze(2).contiguous(format).squeeze(2);
  return t.contiguous(format);
}

}  // namespace opd::common
