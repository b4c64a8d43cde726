// pixel_shuffle and pixel_unshuffle as one permutation each: [..., C*r*r, H, W] viewed as
// [..., C, r, r, H, W] and laid out as [..., C, H, r, W, r] (and back). The result is a new
// tensor in the input's layout (channels-last stays channels-last), as PyTorch 1.13's CPU kernel
// makes it.

#include <vector>

#include "common/output.h"
#include "common/pool_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// `t` (of `sizes`) as a new tensor in `self`'s layout.
Tensor in_layout_of(const Tensor& self, const Tensor& t, const std::vector<int64_t>& sizes) {
  Tensor out = t.clone(MemoryFormat::Contiguous).view(sizes);
  if (common::is_channels_last_2d(self)) out = out.contiguous(MemoryFormat::ChannelsLast);
  return out;
}

std::vector<int64_t> leading(const Tensor& self) {
  return std::vector<int64_t>(self.sizes().begin(), self.sizes().end() - 3);
}

}  // namespace

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  OPD_CHECK(self.dim() >= 3,
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with {} "
            "dimension(s)",
            self.dim());
  const int64_t r = upscale_factor;
  OPD_CHECK(r > 0, "pixel_shuffle expects a positive upscale_factor, but got {}", r);
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  OPD_CHECK(c % (r * r) == 0,
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            "of upscale_factor, but input.size(-3)={} is not divisible by {}",
            c, r * r);
  const int64_t n = static_cast<int64_t>(self.dim()) - 3, oc = c / (r * r);
  std::vector<int64_t> split = leading(self), perm, out_sizes = leading(self);
  split.insert(split.end(), {oc, r, r, h, w});
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  perm.insert(perm.end(), {n, n + 3, n + 1, n + 4, n + 2});
  out_sizes.insert(out_sizes.end(), {oc, h * r, w * r});
  return in_layout_of(self, self.reshape(split).permute(perm), out_sizes);
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  OPD_CHECK(self.dim() >= 3,
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with {} "
            "dimension(s)",
            self.dim());
  const int64_t r = downscale_factor;
  OPD_CHECK(r > 0, "pixel_unshuffle expects a positive downscale_factor, but got {}", r);
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  OPD_CHECK(h % r == 0,
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            "input.size(-2)={} is not divisible by {}",
            h, r);
  OPD_CHECK(w % r == 0,
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            "input.size(-1)={} is not divisible by {}",
            w, r);
  const int64_t n = static_cast<int64_t>(self.dim()) - 3, oh = h / r, ow = w / r;
  std::vector<int64_t> split = leading(self), perm, out_sizes = leading(self);
  split.insert(split.end(), {c, oh, r, ow, r});
  for (int64_t i = 0; i < n; ++i) perm.push_back(i);
  perm.insert(perm.end(), {n, n + 2, n + 4, n + 1, n + 3});
  out_sizes.insert(out_sizes.end(), {c * r * r, oh, ow});
  return in_layout_of(self, self.reshape(split).permute(perm), out_sizes);
}

}  // namespace opd::native
