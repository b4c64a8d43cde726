// The convolution front operators torch.nn.functional calls, as PyTorch 1.13 composes them over
// aten::convolution: conv1d/2d/3d (an unbatched input gets a batch of one, which is squeezed
// off the result), their padding='same'/'valid' overloads (PyTorch's _convolution_mode),
// conv_transpose1d/2d; and convolution.out (PyTorch's autogen out= form).

#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/conv_shape.h"
#include "common/output.h"
#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"
#include "opd/warning.h"

namespace opd::native {
namespace {

const std::vector<int64_t> kZero{0};

// PyTorch's batchify: the input with a batch dimension, and whether it had one.
std::pair<Tensor, bool> batchify(const Tensor& input, int64_t spatial, const char* name) {
  const int64_t unbatched = spatial + 1;
  const bool batched = input.dim() == unbatched + 1;
  OPD_CHECK(input.dim() == unbatched || batched,
            "Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}",
            unbatched, unbatched + 1, name, common::shape_str(input.sizes()));
  return {batched ? input : input.unsqueeze(0), batched};
}

Tensor conv_nd(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
               IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
               int64_t spatial, const char* name) {
  auto [x, batched] = batchify(input, spatial, name);
  Tensor out = opd::convolution(x, weight, bias, stride, padding, dilation, false, kZero, groups);
  return batched ? out : out.squeeze(0);
}

Tensor conv_transpose_nd(const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef output_padding, int64_t groups, IntArrayRef dilation,
                         int64_t spatial, const char* name) {
  auto [x, batched] = batchify(input, spatial, name);
  Tensor out =
      opd::convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups);
  return batched ? out : out.squeeze(0);
}

// PyTorch's _convolution_mode. 'same' pads each side by half of dilation * (kernel - 1); where
// that total is odd the extra element goes on the right, as a zero-padded copy of the input
// (Note [padding='same' with an odd total]).
Tensor convolution_mode(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride,
                        std::string_view padding, IntArrayRef dilation, int64_t groups) {
  if (padding == "valid") {
    return opd::convolution(input, weight, bias, stride, kZero, dilation, false, kZero, groups);
  }
  OPD_CHECK(padding == "same", "Invalid padding string: '{}'", padding);
  for (int64_t s : stride) {
    OPD_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
  }
  const int64_t dims = weight.dim() - 2;
  std::vector<int64_t> pad_l;
  Tensor x = input;
  // Note [padding='same' with an odd total]
  // The total padding dilation * (kernel - 1) splits into total / 2 on the left and the rest
  // on the right, one more where it is odd. convolution pads symmetrically, so the input gets
  // one zero column at the end of each such dimension first (PyTorch pads with constant_pad_nd
  // and warns once; here a cat with zeros, the same values and gradient).
  bool symmetric = true;
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[static_cast<size_t>(i)];
    const int64_t total = d * (weight.size(i + 2) - 1);
    pad_l.push_back(total / 2);
    if (total % 2 == 0) continue;
    if (symmetric) {
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        opd::warn(
            "Using padding='same' with even kernel lengths and odd dilation may require a "
            "zero-padded copy of the input be created");
      }
    }
    symmetric = false;
    const int64_t dim = x.dim() - dims + i;
    std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
    sizes[static_cast<size_t>(dim)] = 1;
    const Tensor zero =
        opd::zeros(sizes, TensorOptions().dtype(x.scalar_type()).device(x.device()));
    x = opd::cat({x, zero}, dim);
  }
  // constant_pad_nd keeps a channels-last input channels-last, and so the result.
  if (!symmetric && input.dim() == 4 && common::suggests_channels_last(input)) {
    x = x.contiguous(MemoryFormat::ChannelsLast);
  }
  return opd::convolution(x, weight, bias, stride, pad_l, dilation, false, kZero, groups);
}

Tensor conv_padding_nd(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       IntArrayRef stride, std::string_view padding, IntArrayRef dilation,
                       int64_t groups, int64_t spatial, const char* name) {
  auto [x, batched] = batchify(input, spatial, name);
  Tensor out = convolution_mode(x, weight, bias, stride, padding, dilation, groups);
  return batched ? out : out.squeeze(0);
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d");
}

Tensor conv1d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, std::string_view padding, IntArrayRef dilation,
                      int64_t groups) {
  return conv_padding_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv2d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, std::string_view padding, IntArrayRef dilation,
                      int64_t groups) {
  return conv_padding_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv3d_padding(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      IntArrayRef stride, std::string_view padding, IntArrayRef dilation,
                      int64_t groups) {
  return conv_padding_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d");
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           1, "conv_transpose1d");
}

Tensor conv_transpose2d_input(const Tensor& input, const Tensor& weight,
                              const std::optional<Tensor>& bias, IntArrayRef stride,
                              IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                              IntArrayRef dilation) {
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           2, "conv_transpose2d");
}

Tensor& convolution_out(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                        int64_t groups, Tensor& out) {
  const Tensor result = opd::convolution(input, weight, bias, stride, padding, dilation, transposed,
                                         output_padding, groups);
  common::resize_output("convolution", out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace opd::native
