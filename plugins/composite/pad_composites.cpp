// Padding fronts, composed as PyTorch 1.13 composes them (aten/src/ATen/native/PadNd.cpp):
// constant_pad_nd (narrowing for negative pads, a fill and a copy for positive ones), and pad /
// _pad_enum, which choose constant_pad_nd, the reflection or replication kernels, or
// _pad_circular (written here with cat, which autograd differentiates).

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/output.h"
#include "common/pool_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// PyTorch's at::padding_mode, the `int mode` of _pad_enum.
enum PaddingMode : int64_t { kConstant = 0, kReflect = 1, kReplicate = 2, kCircular = 3 };

const char* mode_name(int64_t mode) {
  switch (mode) {
    case kReflect:
      return "reflect";
    case kReplicate:
      return "replicate";
    case kCircular:
      return "circular";
    default:
      return "constant";
  }
}

}  // namespace

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  OPD_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals {}", pad.size());
  const int64_t l_inp = self.dim(), l_pad = static_cast<int64_t>(pad.size()) / 2;
  const int64_t l_diff = l_inp - l_pad;
  OPD_CHECK(l_inp >= l_pad,
            "Length of pad should be no more than twice the number of dimensions of the input. Pad "
            "length is {}while the input has {}dimensions.",
            pad.size(), l_inp);
  // pad lists the last dim's (before, after) first.
  bool all_non_positive = true;
  Tensor c_input = self;
  for (int64_t i = l_diff; i < l_inp; ++i) {
    const int64_t before = pad[2 * (l_inp - i - 1)], after = pad[2 * (l_inp - i - 1) + 1];
    if (before < 0)
      c_input = c_input.narrow(i, -before, c_input.size(i) + before);
    else if (before != 0)
      all_non_positive = false;
    if (after < 0)
      c_input = c_input.narrow(i, 0, c_input.size(i) + after);
    else if (after != 0)
      all_non_positive = false;
  }
  if (all_non_positive) return c_input.clone();
  std::vector<int64_t> new_shape(self.sizes().begin(), self.sizes().begin() + l_diff);
  for (int64_t i = 0; i < l_pad; ++i) {
    const int64_t idx = static_cast<int64_t>(pad.size()) - (i + 1) * 2;
    const int64_t new_dim = self.size(l_diff + i) + pad[idx] + pad[idx + 1];
    OPD_CHECK(new_dim > 0,
              "The input size {}, plus negative padding {} and {} resulted in a negative output "
              "size, which is invalid. Check dimension {} of your input.",
              self.size(l_diff + i), pad[idx], pad[idx + 1], l_diff + i);
    new_shape.push_back(new_dim);
  }
  Tensor output = opd::empty(
      new_shape, TensorOptions().dtype(self.scalar_type()).device(self.device()),
      common::is_channels_last_2d(self) ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous);
  output.fill_(value);
  Tensor c_output = output;
  for (int64_t i = l_diff; i < l_inp; ++i) {
    const int64_t before = pad[2 * (l_inp - i - 1)], after = pad[2 * (l_inp - i - 1) + 1];
    if (before > 0) c_output = c_output.narrow(i, before, c_output.size(i) - before);
    if (after > 0) c_output = c_output.narrow(i, 0, c_output.size(i) - after);
  }
  c_output.copy_(c_input);
  return output;
}

Tensor _pad_circular(const Tensor& self, IntArrayRef pad) {
  const int64_t ndim = self.dim() - 2;
  OPD_CHECK(static_cast<int64_t>(pad.size()) + 4 == self.dim() * 2,
            "Expected padding of length {}, but got {}", ndim * 2, pad.size());
  Tensor out = self;
  bool copied = false;
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    const int64_t before = pad[2 * i], after = pad[2 * i + 1], size = self.size(dim);
    OPD_CHECK(before <= size && after <= size,
              "Padding value causes wrapping around more than once.");
    OPD_CHECK(size + before + after >= 0,
              "Negative padding value is resulting in an empty dimension");
    // Crop first (negative pads), then wrap the cropped length around.
    if (before < 0) out = out.narrow(dim, -before, out.size(dim) + before);
    if (after < 0) out = out.narrow(dim, 0, out.size(dim) + after);
    const int64_t n = out.size(dim);
    std::vector<Tensor> parts;
    if (before > 0) parts.push_back(out.narrow(dim, n - before, before));
    parts.push_back(out);
    if (after > 0) parts.push_back(out.narrow(dim, 0, after));
    if (parts.size() > 1) {
      out = opd::cat(parts, dim);
      copied = true;
    }
  }
  return copied ? out : out.clone();
}

Tensor _pad_enum(const Tensor& self, IntArrayRef pad, int64_t mode, std::optional<double> value) {
  const int64_t input_dim = self.dim();
  const int64_t n = static_cast<int64_t>(pad.size());
  OPD_CHECK(n % 2 == 0, "Padding length must be divisible by 2");
  OPD_CHECK(n <= input_dim * 2, "Padding length too large");
  if (mode == kConstant) return opd::constant_pad_nd(self, pad, value.value_or(0.0));
  OPD_CHECK(!value || *value == 0, "Padding mode \"{}\" doesn't take in value argument",
            mode_name(mode));
  if (n == 2 && (input_dim == 2 || input_dim == 3)) {
    if (mode == kReflect) return opd::reflection_pad1d(self, pad);
    if (mode == kReplicate) return opd::replication_pad1d(self, pad);
    if (mode == kCircular) return opd::_pad_circular(self, pad);
  } else if (n == 4 && (input_dim == 3 || input_dim == 4)) {
    if (mode == kReflect) return opd::reflection_pad2d(self, pad);
    if (mode == kReplicate) return opd::replication_pad2d(self, pad);
    if (mode == kCircular) return opd::_pad_circular(self, pad);
  } else if (n == 6 && (input_dim == 4 || input_dim == 5) && mode == kCircular) {
    return opd::_pad_circular(self, pad);
  }
  OPD_CHECK_T(NotImplementedError, false,
              "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  return {};
}

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode,
           std::optional<double> value) {
  int64_t m = kConstant;
  if (mode == "reflect")
    m = kReflect;
  else if (mode == "replicate")
    m = kReplicate;
  else if (mode == "circular")
    m = kCircular;
  else
    OPD_CHECK_T(NotImplementedError, mode == "constant", "Unrecognised padding mode {}", mode);
  return opd::_pad_enum(self, pad, m, value);
}

}  // namespace opd::native
