// kron and cross, CompositeImplicitAutograd as PyTorch's: kron multiplies views of self and
// other that interleave their dimensions (autograd follows view and mul). PyTorch 1.13 takes
// them with view, so an input that cannot be viewed so (a transposed matrix) raises view's
// "view size is not compatible with input tensor's size and stride ..." there as here; cross is
// linalg_cross with PyTorch 1.13's default dim (the first of self's dimensions of size 3; torch
// 1.13 gives no deprecation warning when dim is left out).

#include <algorithm>
#include <optional>
#include <vector>

#include "common/output.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// kron's shapes: self viewed as [s0, 1, s1, 1, ...], other as [1, o0, 1, o1, ...] (the shorter
// padded with leading 1s to the same number of dimensions), their product's [s0, o0, s1, o1,
// ...], and the result's [s0 * o0, s1 * o1, ...].
struct KronShapes {
  std::vector<int64_t> self_view, other_view, product, result;
};

KronShapes kron_shapes(const Tensor& self, const Tensor& other) {
  const int64_t nd = std::max(self.dim(), other.dim());
  const int64_t pad_self = nd - self.dim(), pad_other = nd - other.dim();
  KronShapes k;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t s = i >= pad_self ? self.size(i - pad_self) : 1;
    const int64_t o = i >= pad_other ? other.size(i - pad_other) : 1;
    k.self_view.insert(k.self_view.end(), {s, 1});
    k.other_view.insert(k.other_view.end(), {1, o});
    k.product.insert(k.product.end(), {s, o});
    k.result.push_back(s * o);
  }
  return k;
}

int64_t default_cross_dim(std::optional<int64_t> dim, IntArrayRef sizes) {
  if (dim) return *dim;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 3) return static_cast<int64_t>(i);
  }
  OPD_CHECK(false, "no dimension of size 3 in input");
  return 0;
}

}  // namespace

Tensor kron(const Tensor& self, const Tensor& other) {
  const KronShapes k = kron_shapes(self, other);
  return opd::mul(self.view(k.self_view), other.view(k.other_view)).view(k.result);
}

Tensor& kron_out(const Tensor& self, const Tensor& other, Tensor& out) {
  const KronShapes k = kron_shapes(self, other);
  common::resize_output("kron", out, k.result);
  if (out.is_contiguous()) {
    Tensor product = out.view(k.product);
    opd::mul_out(product, self.view(k.self_view), other.view(k.other_view));
  } else {
    Tensor product = opd::empty(k.product, TensorOptions(out.scalar_type()).device(out.device()));
    opd::mul_out(product, self.view(k.self_view), other.view(k.other_view));
    out.copy_(product.view(k.result));
  }
  return out;
}

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  return opd::linalg_cross(self, other, default_cross_dim(dim, self.sizes()));
}

Tensor& cross_out(const Tensor& self, const Tensor& other, std::optional<int64_t> dim,
                  Tensor& out) {
  return opd::linalg_cross_outf(self, other, default_cross_dim(dim, self.sizes()), out);
}

}  // namespace opd::native
