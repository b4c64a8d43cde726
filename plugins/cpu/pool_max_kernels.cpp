// CPU kernels of max_pool2d_with_indices and its backward. Shapes, layouts and errors come from
// common/pool_shape.h (shared with Meta); see Note [Pooling layouts]. An index is the position
// of the maximum in its input plane, h * W + w, as PyTorch's. A NaN wins its window (the first
// NaN); a window of -inf keeps its first element's position.
//
// Contiguous inputs run plane by plane (batch * channels in parallel); channels-last inputs run
// pixel by pixel with the channels as the inner, vectorisable loop.

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
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

// `t` (4-D channels-last or any 3-D/4-D) as a dense buffer in the layout of Note [Pooling
// layouts]: NHWC for channels-last, else NCHW.
Tensor dense(const Tensor& t, bool channels_last) {
  if (!channels_last) return t.contiguous();
  const std::vector<int64_t> to_nhwc{0, 2, 3, 1};
  return t.permute(to_nhwc).contiguous();
}

// The rows [h0, h1) of window oh (and likewise columns): the first inside the input, stepping
// by the dilation.
struct Window {
  int64_t h0, h1, w0, w1;
};
Window window(const Pool2dShape& s, int64_t oh, int64_t ow) {
  Window w;
  w.h0 = oh * s.sh - s.ph;
  w.w0 = ow * s.sw - s.pw;
  w.h1 = std::min(w.h0 + (s.kh - 1) * s.dh + 1, s.in_h);
  w.w1 = std::min(w.w0 + (s.kw - 1) * s.dw + 1, s.in_w);
  while (w.h0 < 0) w.h0 += s.dh;
  while (w.w0 < 0) w.w0 += s.dw;
  return w;
}

template <class T>
void max_pool_planes(const Pool2dShape& s, const T* in, T* out, int64_t* idx) {
  using C = opmath_t<T>;
  const int64_t planes = s.batch * s.channels, in_plane = s.in_h * s.in_w,
                out_plane = s.out_h * s.out_w;
  const int64_t grain =
      std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_plane * s.kh * s.kw));
  cpu::parallel_for(0, planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* x = in + p * in_plane;
      T* y = out + p * out_plane;
      int64_t* ix = idx + p * out_plane;
      for (int64_t oh = 0; oh < s.out_h; ++oh)
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          const Window w = window(s, oh, ow);
          C best = -std::numeric_limits<C>::infinity();
          int64_t at = w.h0 * s.in_w + w.w0;
          for (int64_t h = w.h0; h < w.h1; h += s.dh)
            for (int64_t c = w.w0; c < w.w1; c += s.dw) {
              const C v = static_cast<C>(x[h * s.in_w + c]);
              if (v > best || std::isnan(v)) {
                best = v;
                at = h * s.in_w + c;
              }
            }
          y[oh * s.out_w + ow] = static_cast<T>(best);
          ix[oh * s.out_w + ow] = at;
        }
    }
  });
}

template <class T>
void max_pool_channels_last(const Pool2dShape& s, const T* in, T* out, int64_t* idx) {
  using C = opmath_t<T>;
  const int64_t nc = s.channels, pixels = s.batch * s.out_h * s.out_w;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, nc * s.kh * s.kw));
  cpu::parallel_for(0, pixels, grain, [&](int64_t begin, int64_t end) {
    std::vector<C> best(nc);
    for (int64_t px = begin; px < end; ++px) {
      const int64_t n = px / (s.out_h * s.out_w), oh = px / s.out_w % s.out_h, ow = px % s.out_w;
      const Window w = window(s, oh, ow);
      int64_t* ix = idx + px * nc;
      std::fill(best.begin(), best.end(), -std::numeric_limits<C>::infinity());
      std::fill(ix, ix + nc, w.h0 * s.in_w + w.w0);
      for (int64_t h = w.h0; h < w.h1; h += s.dh)
        for (int64_t c = w.w0; c < w.w1; c += s.dw) {
          const T* x = in + ((n * s.in_h + h) * s.in_w + c) * nc;
          const int64_t at = h * s.in_w + c;
          for (int64_t k = 0; k < nc; ++k) {
            const C v = static_cast<C>(x[k]);
            const bool take = v > best[k] || v != v;
            best[k] = take ? v : best[k];
            ix[k] = take ? at : ix[k];
          }
        }
      T* y = out + px * nc;
      for (int64_t k = 0; k < nc; ++k) y[k] = static_cast<T>(best[k]);
    }
  });
}

// An index given to the backward must fall inside its plane (a user may pass any tensor).
void check_index(int64_t index, int64_t plane) {
  OPD_CHECK(index >= 0 && index < plane,
            "max_pool2d_with_indices_backward: index {} is out of "
            "bounds for an input plane of {} elements",
            index, plane);
}

// grad_input[plane][indices] += grad_output, plane by plane (contiguous) or image by image
// (channels-last: an image's channels share no element), accumulating in opmath_t<T>.
template <class T>
void max_pool_backward(const Pool2dShape& s, const T* go, const int64_t* idx, T* gi) {
  using C = opmath_t<T>;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  if (!s.channels_last) {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_plane));
    cpu::parallel_for(0, s.batch * s.channels, grain, [&](int64_t begin, int64_t end) {
      std::vector<C> acc(in_plane);
      for (int64_t p = begin; p < end; ++p) {
        std::fill(acc.begin(), acc.end(), C(0));
        const T* g = go + p * out_plane;
        const int64_t* ix = idx + p * out_plane;
        for (int64_t o = 0; o < out_plane; ++o) {
          check_index(ix[o], in_plane);
          acc[ix[o]] += static_cast<C>(g[o]);
        }
        T* x = gi + p * in_plane;
        for (int64_t i = 0; i < in_plane; ++i) x[i] = static_cast<T>(acc[i]);
      }
    });
    return;
  }
  const int64_t nc = s.channels;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_plane * nc));
  cpu::parallel_for(0, s.batch, grain, [&](int64_t begin, int64_t end) {
    std::vector<C> acc(in_plane * nc);
    for (int64_t n = begin; n < end; ++n) {
      std::fill(acc.begin(), acc.end(), C(0));
      const T* g = go + n * out_plane * nc;
      const int64_t* ix = idx + n * out_plane * nc;
      for (int64_t o = 0; o < out_plane; ++o)
        for (int64_t k = 0; k < nc; ++k) {
          check_index(ix[o * nc + k], in_plane);
          acc[ix[o * nc + k] * nc + k] += static_cast<C>(g[o * nc + k]);
        }
      T* x = gi + n * in_plane * nc;
      for (int64_t i = 0; i < in_plane * nc; ++i) x[i] = static_cast<T>(acc[i]);
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  const Pool2dShape s =
      common::max_pool2d_shape(self, kernel_size, stride, padding, dilation, ceil_mode);
  Tensor out = common::pool_output(s.out_sizes, self.scalar_type(), self.device(), s.channels_last);
  Tensor indices = common::pool_output(s.out_sizes, kLong, self.device(), s.channels_last);
  if (out.numel() == 0) return {out, indices};
  const Tensor x = dense(self, s.channels_last);
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, self.scalar_type(), "max_pool2d", [&] {
    const scalar_t* in = static_cast<scalar_t*>(x.data_ptr());
    if (s.channels_last)
      max_pool_channels_last(s, in, static_cast<scalar_t*>(out.data_ptr()),
                             indices.data_ptr<int64_t>());
    else
      max_pool_planes(s, in, static_cast<scalar_t*>(out.data_ptr()), indices.data_ptr<int64_t>());
  });
  return {out, indices};
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self,
                                        IntArrayRef kernel_size, IntArrayRef stride,
                                        IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  const Pool2dShape s =
      common::max_pool2d_shape(self, kernel_size, stride, padding, dilation, ceil_mode);
  common::check_pool2d_backward(s, self, grad_output, &indices);
  Tensor grad_input =
      common::pool_output(self.sizes(), self.scalar_type(), self.device(), s.channels_last);
  if (grad_input.numel() == 0) return grad_input;
  const Tensor go = dense(grad_output, s.channels_last);
  const Tensor ix = dense(indices, s.channels_last);
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, self.scalar_type(), "max_pool2d_backward", [&] {
    max_pool_backward(s, static_cast<scalar_t*>(go.data_ptr()), ix.data_ptr<int64_t>(),
                      static_cast<scalar_t*>(grad_input.data_ptr()));
  });
  return grad_input;
}

}  // namespace opd::native
