// CPU impl of the structured linalg_cross (linalg_cross.out; linalg_cross delegates to it): the
// cross product of the 3-vectors along dim, self and other broadcast to out's shape, in the
// dtypes the meta function lets through (no Half or Bool). Each product is rounded to the dtype
// before the difference, as PyTorch's kernel computes in scalar_t (BFloat16 results agree).

#include <array>
#include <vector>

#include "common/type_dispatch.h"
#include "cpu/index_lines.h"
#include "opd/native/CPU.h"

namespace opd::native {

void linalg_cross_out(const Tensor& self, const Tensor& other, int64_t dim, const Tensor& out) {
  if (out.numel() == 0) return;
  dim = maybe_wrap_dim(dim, self.dim());
  const Tensor a = self.expand(out.sizes());
  const Tensor b = other.expand(out.sizes());
  const int64_t sa = a.stride(dim), sb = b.stride(dim), so = out.stride(dim);
  OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND(kBFloat16, out.scalar_type(), "cross", [&] {
    using opmath = common::opmath_t<scalar_t>;
    const auto* pa = static_cast<const scalar_t*>(a.data_ptr());
    const auto* pb = static_cast<const scalar_t*>(b.data_ptr());
    auto* po = static_cast<scalar_t*>(out.data_ptr());
    // Each call is one 3-vector along dim (sizes[dim] = 1 makes one call per vector), which it
    // alone writes.
    std::vector<int64_t> sizes(out.sizes().begin(), out.sizes().end());
    sizes[dim] = 1;
    cpu::for_each_line<3>(sizes, dim, {a.strides(), b.strides(), out.strides()}, true,
                          [&](const std::array<int64_t, 3>& off) {
                            const scalar_t* x = pa + off[0];
                            const scalar_t* y = pb + off[1];
                            scalar_t* z = po + off[2];
                            const opmath x0 = x[0], x1 = x[sa], x2 = x[2 * sa];
                            const opmath y0 = y[0], y1 = y[sb], y2 = y[2 * sb];
                            auto diff = [](opmath p, opmath q) {
                              return static_cast<scalar_t>(opmath(static_cast<scalar_t>(p)) -
                                                           opmath(static_cast<scalar_t>(q)));
                            };
                            z[0] = diff(x1 * y2, x2 * y1);
                            z[so] = diff(x2 * y0, x0 * y2);
                            z[2 * so] = diff(x0 * y1, x1 * y0);
                          });
  });
}

}  // namespace opd::native
