// CPU kernels of upsample_nearest2d and upsample_bilinear2d and their backward operators.
// Shapes and errors come from common/upsample_shape.h (shared with Meta); layouts as Note
// [Pooling layouts]. Each output row (column) reads two input rows (columns) i0, i1 with weights
// l0, l1, computed once per call as PyTorch 1.13 computes them (UpSample.h: nearest_idx,
// area_pixel_compute_scale, compute_source_index_and_lambda; float for float and BFloat16,
// double for double): nearest copies (i1 = i0, l1 = 0 unused, so inf and NaN pass unchanged). The
// backward adds each output gradient, weighted, to the input elements it was read from, plane by
// plane (or image by image).

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "common/output.h"
#include "common/pool_shape.h"
#include "common/type_dispatch.h"
#include "common/upsample_shape.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

constexpr int64_t kGrain = 32768;

using common::opmath_t;

template <class C>
struct Taps {
  std::vector<int64_t> i0, i1;
  std::vector<C> l0, l1;
};

// PyTorch's compute_scales_value: 1 / scale when given and positive, else in / out.
template <class C>
C scales_value(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? static_cast<C>(1.0 / *scale)
                             : static_cast<C>(in) / static_cast<C>(out);
}

template <class C>
Taps<C> nearest_taps(int64_t in, int64_t out, std::optional<double> scale) {
  Taps<C> t;
  const float s = scales_value<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i = o;
    if (out == 2 * in)
      i = o >> 1;
    else if (out != in)
      i = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
    t.i0.push_back(i);
    t.i1.push_back(i);
    t.l0.push_back(C(1));
    t.l1.push_back(C(0));
  }
  return t;
}

template <class C>
Taps<C> linear_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Taps<C> t;
  C ratio;
  if (align_corners)
    ratio = out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0);
  else
    ratio = scales_value<C>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) {
      t.i0.push_back(o);
      t.i1.push_back(o);
      t.l0.push_back(C(1));
      t.l1.push_back(C(0));
      continue;
    }
    C real =
        align_corners ? ratio * static_cast<C>(o) : ratio * (static_cast<C>(o) + C(0.5)) - C(0.5);
    if (!align_corners && real < 0) real = 0;
    // Clamped as PyTorch's compute_source_index_and_lambda: a scale given with an output size
    // it does not describe (scales_h=0.5 for twice the input) reaches past the input.
    const int64_t i0 = std::min(static_cast<int64_t>(real), in - 1);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const C l1 = std::min<C>(std::max<C>(real - static_cast<C>(i0), C(0)), C(1));
    t.i0.push_back(i0);
    t.i1.push_back(i1);
    t.l0.push_back(C(1) - l1);
    t.l1.push_back(l1);
  }
  return t;
}

struct Geometry {
  int64_t batch, channels, in_h, in_w, out_h, out_w;
  bool channels_last;
};

Geometry geometry(IntArrayRef input_size, IntArrayRef output_size, bool channels_last) {
  return {input_size[0],  input_size[1],  input_size[2], input_size[3],
          output_size[0], output_size[1], channels_last};
}

Tensor dense(const Tensor& t, bool channels_last) {
  if (!channels_last) return t.contiguous();
  const std::vector<int64_t> to_nhwc{0, 2, 3, 1};
  return t.permute(to_nhwc).contiguous();
}

template <class T, class C>
void upsample_forward(bool nearest, const Geometry& g, const Taps<C>& th, const Taps<C>& tw,
                      const T* in, T* out) {
  // A "unit" is a plane (contiguous, nc = 1) or an image (channels-last, nc = channels).
  const int64_t nc = g.channels_last ? g.channels : 1;
  const int64_t units = g.channels_last ? g.batch : g.batch * g.channels;
  const int64_t rows = units * g.out_h;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, g.out_w * nc * 4));
  cpu::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t u = r / g.out_h, oh = r % g.out_h;
      const T* x = in + u * g.in_h * g.in_w * nc;
      const T* row0 = x + th.i0[oh] * g.in_w * nc;
      const T* row1 = x + th.i1[oh] * g.in_w * nc;
      const C h0 = th.l0[oh], h1 = th.l1[oh];
      T* y = out + r * g.out_w * nc;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t a = tw.i0[ow] * nc, b = tw.i1[ow] * nc;
        const C w0 = tw.l0[ow], w1 = tw.l1[ow];
        if (nearest) {
          std::copy(row0 + a, row0 + a + nc, y + ow * nc);
          continue;
        }
        for (int64_t k = 0; k < nc; ++k) {
          const C v = h0 * (w0 * static_cast<C>(row0[a + k]) + w1 * static_cast<C>(row0[b + k])) +
                      h1 * (w0 * static_cast<C>(row1[a + k]) + w1 * static_cast<C>(row1[b + k]));
          y[ow * nc + k] = static_cast<T>(v);
        }
      }
    }
  });
}

template <class T, class C>
void upsample_backward(bool nearest, const Geometry& g, const Taps<C>& th, const Taps<C>& tw,
                       const T* go, T* gi) {
  const int64_t nc = g.channels_last ? g.channels : 1;
  const int64_t units = g.channels_last ? g.batch : g.batch * g.channels;
  const int64_t in_unit = g.in_h * g.in_w * nc, out_unit = g.out_h * g.out_w * nc;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_unit * 4));
  cpu::parallel_for(0, units, grain, [&](int64_t begin, int64_t end) {
    std::vector<C> acc(in_unit);
    for (int64_t u = begin; u < end; ++u) {
      std::fill(acc.begin(), acc.end(), C(0));
      const T* gy = go + u * out_unit;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        C* row0 = acc.data() + th.i0[oh] * g.in_w * nc;
        C* row1 = acc.data() + th.i1[oh] * g.in_w * nc;
        const C h0 = th.l0[oh], h1 = th.l1[oh];
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const int64_t a = tw.i0[ow] * nc, b = tw.i1[ow] * nc;
          const C w0 = tw.l0[ow], w1 = tw.l1[ow];
          for (int64_t k = 0; k < nc; ++k) {
            const C v = static_cast<C>(gy[(oh * g.out_w + ow) * nc + k]);
            if (nearest) {
              row0[a + k] += v;
              continue;
            }
            row0[a + k] += h0 * w0 * v;
            row0[b + k] += h0 * w1 * v;
            row1[a + k] += h1 * w0 * v;
            row1[b + k] += h1 * w1 * v;
          }
        }
      }
      T* x = gi + u * in_unit;
      for (int64_t i = 0; i < in_unit; ++i) x[i] = static_cast<T>(acc[i]);
    }
  });
}

// nearest (align_corners unused) or bilinear, forward.
Tensor upsample_2d(const Tensor& input, IntArrayRef output_size, bool linear, bool align_corners,
                   std::optional<double> scales_h, std::optional<double> scales_w) {
  const std::vector<int64_t> sizes = common::upsample_2d_meta(
      input, output_size,
      linear ? "compute_indices_weights_linear" : "compute_indices_weights_nearest", !linear);
  const bool cl = common::is_channels_last_2d(input);
  Tensor out = common::pool_output(sizes, input.scalar_type(), input.device(), cl);
  if (out.numel() == 0) return out;
  const Tensor x = dense(input, cl);
  const Geometry g = geometry(input.sizes(), output_size, cl);
  auto run = [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    using C = opmath_t<T>;
    const Taps<C> th = linear ? linear_taps<C>(g.in_h, g.out_h, align_corners, scales_h)
                              : nearest_taps<C>(g.in_h, g.out_h, scales_h);
    const Taps<C> tw = linear ? linear_taps<C>(g.in_w, g.out_w, align_corners, scales_w)
                              : nearest_taps<C>(g.in_w, g.out_w, scales_w);
    upsample_forward<T, C>(!linear, g, th, tw, static_cast<const T*>(x.data_ptr()),
                           static_cast<T*>(out.data_ptr()));
  };
  if (input.scalar_type() == kByte) {
    // Nearest only: a copy, computed in float as any other dtype but with no rounding.
    run(static_cast<uint8_t*>(nullptr));
    return out;
  }
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, input.scalar_type(), "upsample_2d",
                                  [&] { run(static_cast<scalar_t*>(nullptr)); });
  return out;
}

Tensor upsample_2d_backward(const Tensor& grad_output, IntArrayRef output_size,
                            IntArrayRef input_size, bool linear, bool align_corners,
                            std::optional<double> scales_h, std::optional<double> scales_w) {
  common::upsample_2d_backward_meta(
      grad_output, output_size, input_size,
      linear ? "upsample_bilinear2d_backward" : "upsample_nearest2d_backward");
  const bool cl = common::is_channels_last_2d(grad_output);
  Tensor grad_input =
      common::pool_output(input_size, grad_output.scalar_type(), grad_output.device(), cl);
  if (grad_input.numel() == 0) return grad_input;
  const Tensor go = dense(grad_output, cl);
  const Geometry g = geometry(input_size, output_size, cl);
  OPD_DISPATCH_FLOATING_TYPES_AND(
      kBFloat16, grad_output.scalar_type(), "upsample_2d_backward", [&] {
        using C = opmath_t<scalar_t>;
        const Taps<C> th = linear ? linear_taps<C>(g.in_h, g.out_h, align_corners, scales_h)
                                  : nearest_taps<C>(g.in_h, g.out_h, scales_h);
        const Taps<C> tw = linear ? linear_taps<C>(g.in_w, g.out_w, align_corners, scales_w)
                                  : nearest_taps<C>(g.in_w, g.out_w, scales_w);
        upsample_backward<scalar_t, C>(!linear, g, th, tw,
                                       static_cast<const scalar_t*>(go.data_ptr()),
                                       static_cast<scalar_t*>(grad_input.data_ptr()));
      });
  return grad_input;
}

}  // namespace

Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_2d(self, output_size, false, false, scales_h, scales_w);
}

Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size,
                                   IntArrayRef input_size, std::optional<double> scales_h,
                                   std::optional<double> scales_w) {
  return upsample_2d_backward(grad_output, output_size, input_size, false, false, scales_h,
                              scales_w);
}

Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_2d(self, output_size, true, align_corners, scales_h, scales_w);
}

Tensor upsample_bilinear2d_backward(const Tensor& grad_output, IntArrayRef output_size,
                                    IntArrayRef input_size, bool align_corners,
                                    std::optional<double> scales_h,
                                    std::optional<double> scales_w) {
  return upsample_2d_backward(grad_output, output_size, input_size, true, align_corners, scales_h,
                              scales_w);
}

}  // namespace opd::native
