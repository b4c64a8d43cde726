// CPU kernels of reflection_pad{1,2}d and replication_pad{1,2}d and their backward operators.
// Shapes and errors come from common/pad_shape.h (shared with Meta). Output element (oh, ow)
// of a plane reads input (map(oh - pad_t, in_h), map(ow - pad_l, in_w)): reflection mirrors an
// index about the edge without repeating it, replication clamps it; a negative pad crops. The
// backward adds each output element's gradient to the input element it read, plane by plane.

#include <algorithm>
#include <vector>

#include "common/output.h"
#include "common/pad_shape.h"
#include "common/type_dispatch.h"
#include "cpu/parallel.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

constexpr int64_t kGrain = 32768;

using common::PadMode;
using common::PadShape;

// The input positions output positions 0..out-1 read along one dim.
std::vector<int64_t> source_index(PadMode mode, int64_t out, int64_t in, int64_t pad) {
  std::vector<int64_t> src(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i = o - pad;
    if (mode == PadMode::Replicate) {
      i = std::clamp<int64_t>(i, 0, in - 1);
    } else {
      if (i < 0) i = -i;
      if (i >= in) i = 2 * (in - 1) - i;
    }
    src[o] = i;
  }
  return src;
}

template <class T>
void pad_forward(const PadShape& s, const int64_t* rows, const int64_t* cols, const T* in, T* out) {
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_plane));
  cpu::parallel_for(0, s.planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* x = in + p * in_plane;
      T* y = out + p * out_plane;
      for (int64_t oh = 0; oh < s.out_h; ++oh) {
        const T* row = x + rows[oh] * s.in_w;
        T* out_row = y + oh * s.out_w;
        for (int64_t ow = 0; ow < s.out_w; ++ow) out_row[ow] = row[cols[ow]];
      }
    }
  });
}

template <class T>
void pad_backward(const PadShape& s, const int64_t* rows, const int64_t* cols, const T* go, T* gi) {
  using C = common::opmath_t<T>;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_plane));
  cpu::parallel_for(0, s.planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      T* x = gi + p * in_plane;
      const T* y = go + p * out_plane;
      std::fill(x, x + in_plane, T(0));
      for (int64_t oh = 0; oh < s.out_h; ++oh) {
        T* row = x + rows[oh] * s.in_w;
        const T* g_row = y + oh * s.out_w;
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          T& x_i = row[cols[ow]];
          x_i = static_cast<T>(C(x_i) + C(g_row[ow]));
        }
      }
    }
  });
}

Tensor pad_cpu(PadMode mode, int dims, const Tensor& self, IntArrayRef padding) {
  const PadShape s = common::pad_shape(mode, dims, self, padding);
  Tensor out = common::empty_output(s.out_sizes, self.scalar_type(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const std::vector<int64_t> rows = source_index(mode, s.out_h, s.in_h, s.pad_t);
  const std::vector<int64_t> cols = source_index(mode, s.out_w, s.in_w, s.pad_l);
  OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND(kBFloat16, self.scalar_type(), "pad", [&] {
    pad_forward(s, rows.data(), cols.data(), static_cast<const scalar_t*>(x.data_ptr()),
                static_cast<scalar_t*>(out.data_ptr()));
  });
  return out;
}

Tensor pad_backward_cpu(PadMode mode, int dims, const Tensor& grad_output, const Tensor& self,
                        IntArrayRef padding) {
  const PadShape s = common::pad_backward_shape(mode, dims, grad_output, self, padding);
  Tensor grad_input = common::empty_output(self.sizes(), self.scalar_type(), self.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor go = grad_output.contiguous();
  const std::vector<int64_t> rows = source_index(mode, s.out_h, s.in_h, s.pad_t);
  const std::vector<int64_t> cols = source_index(mode, s.out_w, s.in_w, s.pad_l);
  OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND(kBFloat16, self.scalar_type(), "pad_backward", [&] {
    pad_backward(s, rows.data(), cols.data(), static_cast<const scalar_t*>(go.data_ptr()),
                 static_cast<scalar_t*>(grad_input.data_ptr()));
  });
  return grad_input;
}

}  // namespace

Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_cpu(PadMode::Reflect, 1, self, padding);
}
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_cpu(PadMode::Reflect, 2, self, padding);
}
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_cpu(PadMode::Replicate, 1, self, padding);
}
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_cpu(PadMode::Replicate, 2, self, padding);
}

Tensor reflection_pad1d_backward(const Tensor& grad_output, const Tensor& self,
                                 IntArrayRef padding) {
  return pad_backward_cpu(PadMode::Reflect, 1, grad_output, self, padding);
}
Tensor reflection_pad2d_backward(const Tensor& grad_output, const Tensor& self,
                                 IntArrayRef padding) {
  return pad_backward_cpu(PadMode::Reflect, 2, grad_output, self, padding);
}
Tensor replication_pad1d_backward(const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef padding) {
  return pad_backward_cpu(PadMode::Replicate, 1, grad_output, self, padding);
}
Tensor replication_pad2d_backward(const Tensor& grad_output, const Tensor& self,
                                  IntArrayRef padding) {
  return pad_backward_cpu(PadMode::Replicate, 2, grad_output, self, padding);
}

}  // namespace opd::native
