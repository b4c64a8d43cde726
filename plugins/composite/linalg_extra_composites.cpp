// The vector and matrix products users call on top of mm and bmm, as PyTorch's decompositions:
// dot, vdot, mv, outer/ger, addmv, addr, baddbmm, tensordot and trace. Every step is an operator
// (mul, sum, mm, bmm, views), so autograd and Meta follow without kernels of their own. PyTorch
// has kernels for dot, vdot, trace, addmv and baddbmm; here they decompose too (dot is mul then
// sum in the operands' dtype), with PyTorch's checks and messages.

#include <algorithm>
#include <complex>
#include <vector>

#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

bool is_zero(const Scalar& s) {
  return s.is_complex() ? s.to_complex_double() == std::complex<double>() : s.to<double>() == 0;
}

bool is_one(const Scalar& s) {
  return s.is_complex() ? s.to_complex_double() == std::complex<double>(1) : s.to<double>() == 1;
}

// alpha * product + beta * self, where beta == 0 ignores self's values (NaN included) as
// PyTorch's addmm family does; self is broadcast to the product's shape either way.
Tensor scaled_sum(const Tensor& self, const Tensor& product, const Scalar& beta,
                  const Scalar& alpha) {
  const Tensor expanded = self.expand(product.sizes());
  const Tensor scaled = is_one(alpha) ? product : opd::mul(product, alpha);
  if (is_zero(beta)) {
    if (!self.requires_grad()) return scaled;
    // self still gets a gradient, zeros (PyTorch's derivative: grad * beta), not None: a
    // where() that never takes self keeps it in the graph without reading its values.
    const Tensor never =
        opd::zeros(IntArrayRef{}, TensorOptions().dtype(kBool).device(self.device()));
    return opd::where(never, expanded, scaled);
  }
  return opd::add(is_one(beta) ? expanded : opd::mul(expanded, beta), scaled);
}

void check_dot(const Tensor& self, const Tensor& other, const char* op) {
  OPD_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got {}D and {}D tensors",
            self.dim(), other.dim());
  OPD_CHECK(self.scalar_type() == other.scalar_type(),
            "dot : expected both vectors to have same dtype, but found {} and {}",
            self.scalar_type(), other.scalar_type());
  OPD_CHECK(self.numel() == other.numel(),
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number "
            "of elements, but got {} and {} elements respectively",
            self.numel(), other.numel(), self.numel(), other.numel());
  // PyTorch 1.13's CPU kernel: every type but Bool and Half.
  const ScalarType t = self.scalar_type();
  OPD_CHECK(t != kBool && t != kHalf, "\"{}\" not implemented for '{}'", op, t);
}

void check_vector(const Tensor& t, const char* op, const char* arg) {
  OPD_CHECK(t.dim() == 1, "{}: Expected 1-D argument {}, but got {}-D", op, arg, t.dim());
}

}  // namespace

Tensor dot(const Tensor& self, const Tensor& tensor) {
  check_dot(self, tensor, "dot");
  return opd::mul(self, tensor).sum(self.scalar_type());
}

// Real operands only: the conjugate of a complex `self` needs conj, which opdispatch lacks.
Tensor vdot(const Tensor& self, const Tensor& other) {
  check_dot(self, other, "vdot");
  OPD_CHECK(!is_complex(self.scalar_type()), "vdot: complex operands are not supported yet");
  return opd::mul(self, other).sum(self.scalar_type());
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  OPD_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got 1, {}, {}",
            self.dim(), vec.dim());
  OPD_CHECK(self.size(1) == vec.size(0), "size mismatch, got {}, {}x{},{}", self.size(0),
            self.size(0), self.size(1), vec.size(0));
  OPD_CHECK(self.scalar_type() == vec.scalar_type(), "expected scalar type {} but found {}",
            self.scalar_type(), vec.scalar_type());
  return opd::mm(self, vec.unsqueeze(1)).squeeze(1);
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  check_vector(self, "outer", "self");
  check_vector(vec2, "outer", "vec2");
  return opd::mul(self.reshape({self.size(0), 1}), vec2);
}

Tensor ger(const Tensor& self, const Tensor& vec2) { return opd::outer(self, vec2); }

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
             const Scalar& alpha) {
  OPD_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1,
            "vector + matrix @ vector expected, got {}, {}, {}", self.dim(), mat.dim(), vec.dim());
  OPD_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
            "size mismatch, got {}, {}x{},{}", self.dim() > 0 ? self.size(0) : 1, mat.size(0),
            mat.size(1), vec.size(0));
  return scaled_sum(self, opd::mv(mat, vec), beta, alpha);
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
            const Scalar& alpha) {
  check_vector(vec1, "addr", "vec1");
  check_vector(vec2, "addr", "vec2");
  return scaled_sum(self, opd::outer(vec1, vec2), beta, alpha);
}

// PyTorch's order of checks: self is expanded to the result's shape first.
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  (void)self.expand({batch1.size(0), batch1.size(1), batch2.size(2)});
  OPD_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  OPD_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  const int64_t bs = batch1.size(0), contraction = batch1.size(2);
  OPD_CHECK(batch2.size(0) == bs && batch2.size(1) == contraction,
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: "
            "[{}, {}].",
            bs, contraction, batch2.size(0), batch2.size(1));
  return scaled_sum(self, opd::bmm(batch1, batch2), beta, alpha);
}

// PyTorch's: a dimension of size 1 on one side is summed away on the other first; the rest are
// permuted to [kept..., contracted] and [contracted..., kept...] for one mm.
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self,
                 IntArrayRef dims_other) {
  OPD_CHECK(dims_self.size() == dims_other.size(), "both dimension lists should have same length");
  Tensor t1 = self, t2 = other;
  int64_t csize = 1;
  std::vector<bool> contracted1(self.dim()), contracted2(other.dim());
  std::vector<int64_t> p1, p2, result_sizes;
  for (size_t i = 0; i < dims_self.size(); ++i) {
    const int64_t d1 = maybe_wrap_dim(dims_self[i], self.dim());
    const int64_t d2 = maybe_wrap_dim(dims_other[i], other.dim());
    OPD_CHECK(!contracted1[d1], "dim {} appears multiple times in the list of dims", d1);
    OPD_CHECK(!contracted2[d2], "dim {} appears multiple times in the list of dims", d2);
    contracted1[d1] = contracted2[d2] = true;
    const int64_t s1 = self.size(d1), s2 = other.size(d2);
    if (s2 == 1) {
      t1 = t1.sum(IntArrayRef{d1}, true);
    } else if (s1 == 1) {
      t2 = t2.sum(IntArrayRef{d2}, true);
    } else {
      OPD_CHECK(s1 == s2,
                "contracted dimensions need to match, but first has size {} in dim {} and second "
                "has size {} in dim {}",
                s1, dims_self[i], s2, dims_other[i]);
      csize *= s1;
    }
  }
  int64_t size1 = 1, size2 = 1;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (contracted1[i]) continue;
    p1.push_back(i);
    size1 *= t1.size(i);
    result_sizes.push_back(t1.size(i));
  }
  for (int64_t d : dims_self) p1.push_back(maybe_wrap_dim(d, self.dim()));
  for (int64_t d : dims_other) p2.push_back(maybe_wrap_dim(d, other.dim()));
  for (int64_t i = 0; i < other.dim(); ++i) {
    if (contracted2[i]) continue;
    p2.push_back(i);
    size2 *= t2.size(i);
    result_sizes.push_back(t2.size(i));
  }
  t1 = t1.permute(p1).reshape({size1, csize});
  t2 = t2.permute(p2).reshape({csize, size2});
  return opd::mm(t1, t2).reshape(result_sizes);
}

// The diagonal of a matrix is every (m + 1)-th element of its rows laid end to end.
Tensor trace(const Tensor& self) {
  OPD_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim {}", self.dim());
  const ScalarType t = self.scalar_type();
  OPD_CHECK(t != kBool && t != kHalf && t != kBFloat16, "\"trace\" not implemented for '{}'", t);
  const int64_t n = self.size(0), m = self.size(1), k = std::min(n, m);
  return self.reshape({n * m}).slice(0, 0, k * (m + 1), m + 1).sum();
}

}  // namespace opd::native
