// CPU kernels of avg_pool2d, _adaptive_avg_pool2d and their backward operators. Shapes, layouts
// and errors come from common/pool_shape.h (shared with Meta); see Note [Pooling layouts].
// Sums are in opmath_t<T> (float for BFloat16; Long divides as integers, as PyTorch's).
//
// Both are one loop over windows: avg_pool2d's windows are PyTorch's (clipped to the input; the
// divisor counts the padding when count_include_pad, unless divisor_override), adaptive windows
// are rows [floor(o * I / O), ceil((o + 1) * I / O)). Contiguous inputs run plane by plane
// (batch * channels in parallel); channels-last inputs pixel by pixel, channels innermost.

#include <algorithm>
#include <optional>
#include <vector>

#include "common/pool_shape.h"
#include "common/type_dispatch.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

constexpr int64_t kGrain = 32768;

using common::opmath_t;
using common::Pool2dShape;

Tensor dense(const Tensor& t, bool channels_last) {
  if (!channels_last) return t.contiguous();
  const std::vector<int64_t> to_nhwc{0, 2, 3, 1};
  return t.permute(to_nhwc).contiguous();
}

// One window: rows [h0, h1), columns [w0, w1) of the input, and what its sum is divided by.
struct Window {
  int64_t h0, h1, w0, w1, divisor;
  bool empty() const { return h0 >= h1 || w0 >= w1; }
};

struct AvgWindows {
  const Pool2dShape& s;
  bool count_include_pad;
  std::optional<int64_t> divisor_override;
  Window operator()(int64_t oh, int64_t ow) const {
    Window w;
    w.h0 = oh * s.sh - s.ph;
    w.w0 = ow * s.sw - s.pw;
    w.h1 = std::min(w.h0 + s.kh, s.in_h + s.ph);
    w.w1 = std::min(w.w0 + s.kw, s.in_w + s.pw);
    const int64_t padded = (w.h1 - w.h0) * (w.w1 - w.w0);
    w.h0 = std::max<int64_t>(w.h0, 0);
    w.w0 = std::max<int64_t>(w.w0, 0);
    w.h1 = std::min(w.h1, s.in_h);
    w.w1 = std::min(w.w1, s.in_w);
    w.divisor = divisor_override    ? *divisor_override
                : count_include_pad ? padded
                                    : (w.h1 - w.h0) * (w.w1 - w.w0);
    return w;
  }
};

struct AdaptiveWindows {
  const Pool2dShape& s;
  Window operator()(int64_t oh, int64_t ow) const {
    Window w;
    w.h0 = oh * s.in_h / s.out_h;
    w.h1 = ((oh + 1) * s.in_h + s.out_h - 1) / s.out_h;
    w.w0 = ow * s.in_w / s.out_w;
    w.w1 = ((ow + 1) * s.in_w + s.out_w - 1) / s.out_w;
    w.divisor = (w.h1 - w.h0) * (w.w1 - w.w0);
    return w;
  }
};

template <class T, class Windows>
void avg_forward(const Pool2dShape& s, const Windows& windows, const T* in, T* out) {
  using C = opmath_t<T>;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w, nc = s.channels;
  const int64_t work = std::max<int64_t>(1, s.kh * s.kw);
  if (!s.channels_last) {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_plane * work));
    cpu::parallel_for(0, s.batch * nc, grain, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* x = in + p * in_plane;
        T* y = out + p * out_plane;
        for (int64_t oh = 0; oh < s.out_h; ++oh)
          for (int64_t ow = 0; ow < s.out_w; ++ow) {
            const Window w = windows(oh, ow);
            C sum = 0;
            for (int64_t h = w.h0; h < w.h1; ++h)
              for (int64_t c = w.w0; c < w.w1; ++c) sum += static_cast<C>(x[h * s.in_w + c]);
            y[oh * s.out_w + ow] =
                w.empty() ? T(0) : static_cast<T>(sum / static_cast<C>(w.divisor));
          }
      }
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, nc * work));
  cpu::parallel_for(0, s.batch * out_plane, grain, [&](int64_t begin, int64_t end) {
    std::vector<C> sum(nc);
    for (int64_t px = begin; px < end; ++px) {
      const int64_t n = px / out_plane, oh = px / s.out_w % s.out_h, ow = px % s.out_w;
      const Window w = windows(oh, ow);
      std::fill(sum.begin(), sum.end(), C(0));
      for (int64_t h = w.h0; h < w.h1; ++h)
        for (int64_t c = w.w0; c < w.w1; ++c) {
          // __restrict: the sums and the input never overlap, so the loop vectorises.
          const T* __restrict x = in + ((n * s.in_h + h) * s.in_w + c) * nc;
          C* __restrict acc = sum.data();
          for (int64_t k = 0; k < nc; ++k) acc[k] += static_cast<C>(x[k]);
        }
      T* y = out + px * nc;
      if (w.empty()) {
        std::fill(y, y + nc, T(0));
        continue;
      }
      const C d = static_cast<C>(w.divisor);
      const C* __restrict acc = sum.data();
      T* __restrict y_px = y;
      for (int64_t k = 0; k < nc; ++k) y_px[k] = static_cast<T>(acc[k] / d);
    }
  });
}

// Adds grad_output / divisor over each window, plane by plane (contiguous) or image by image
// (channels-last), accumulating in opmath_t<T>.
template <class T, class Windows>
void avg_backward(const Pool2dShape& s, const Windows& windows, const T* go, T* gi) {
  using C = opmath_t<T>;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  const int64_t nc = s.channels_last ? s.channels : 1;
  const int64_t units = s.channels_last ? s.batch : s.batch * s.channels;
  const int64_t grain =
      std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_plane * nc * s.kh * s.kw));
  cpu::parallel_for(0, units, grain, [&](int64_t begin, int64_t end) {
    std::vector<C> acc(in_plane * nc);
    for (int64_t u = begin; u < end; ++u) {
      std::fill(acc.begin(), acc.end(), C(0));
      const T* g = go + u * out_plane * nc;
      for (int64_t oh = 0; oh < s.out_h; ++oh)
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          const Window w = windows(oh, ow);
          if (w.empty()) continue;
          const T* go_px = g + (oh * s.out_w + ow) * nc;
          for (int64_t h = w.h0; h < w.h1; ++h)
            for (int64_t c = w.w0; c < w.w1; ++c) {
              C* a = acc.data() + (h * s.in_w + c) * nc;
              for (int64_t k = 0; k < nc; ++k)
                a[k] += static_cast<C>(go_px[k]) / static_cast<C>(w.divisor);
            }
        }
      T* x = gi + u * in_plane * nc;
      for (int64_t i = 0; i < in_plane * nc; ++i) x[i] = static_cast<T>(acc[i]);
    }
  });
}

}  // namespace

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  const Pool2dShape s =
      common::avg_pool2d_shape(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  Tensor out = common::pool_output(s.out_sizes, self.scalar_type(), self.device(), s.channels_last);
  if (out.numel() == 0) return out;
  const Tensor x = dense(self, s.channels_last);
  const AvgWindows windows{s, count_include_pad, divisor_override};
  OPD_DISPATCH_FLOATING_TYPES_AND2(kLong, kBFloat16, self.scalar_type(), "avg_pool2d", [&] {
    avg_forward(s, windows, static_cast<scalar_t*>(x.data_ptr()),
                static_cast<scalar_t*>(out.data_ptr()));
  });
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                           IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override) {
  const Pool2dShape s =
      common::avg_pool2d_shape(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  common::check_pool2d_backward(s, self, grad_output, nullptr);
  Tensor grad_input =
      common::pool_output(self.sizes(), self.scalar_type(), self.device(), s.channels_last);
  if (grad_input.numel() == 0) return grad_input;
  const Tensor go = dense(grad_output, s.channels_last);
  const AvgWindows windows{s, count_include_pad, divisor_override};
  OPD_DISPATCH_FLOATING_TYPES_AND2(kLong, kBFloat16, self.scalar_type(), "avg_pool2d_backward",
                                   [&] {
                                     avg_backward(s, windows, static_cast<scalar_t*>(go.data_ptr()),
                                                  static_cast<scalar_t*>(grad_input.data_ptr()));
                                   });
  return grad_input;
}

Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  const Pool2dShape s = common::adaptive_avg_pool2d_shape(self, output_size);
  Tensor out = common::pool_output(s.out_sizes, self.scalar_type(), self.device(), s.channels_last);
  if (out.numel() == 0) return out;
  const Tensor x = dense(self, s.channels_last);
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, self.scalar_type(), "adaptive_avg_pool2d", [&] {
    avg_forward(s, AdaptiveWindows{s}, static_cast<scalar_t*>(x.data_ptr()),
                static_cast<scalar_t*>(out.data_ptr()));
  });
  return out;
}

Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  const Pool2dShape s = common::adaptive_avg_pool2d_backward_shape(grad_output, self);
  Tensor grad_input =
      common::pool_output(self.sizes(), self.scalar_type(), self.device(), s.channels_last);
  if (grad_input.numel() == 0) return grad_input;
  const Tensor go = dense(grad_output, s.channels_last);
  OPD_DISPATCH_FLOATING_TYPES_AND(
      kBFloat16, self.scalar_type(), "adaptive_avg_pool2d_backward_cpu", [&] {
        avg_backward(s, AdaptiveWindows{s}, static_cast<scalar_t*>(go.data_ptr()),
                     static_cast<scalar_t*>(grad_input.data_ptr()));
      });
  return grad_input;
}

}  // namespace opd::native
