// CPU kernels of the matrix products: mm, bmm, addmm. Shapes, dtypes and errors come from
// common/linalg_shape.h (shared with Meta). Floating and complex types go to OpenBLAS, reading a
// transposed operand in place (CblasTrans) rather than copying it; Half and BFloat16 go through
// float copies; integer types use plain loops.

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <type_traits>

#include "common/linalg_shape.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

// Multiply-adds per parallel chunk of the integer loops.
constexpr int64_t kGrain = 32768;

template <class T>
inline constexpr bool kBlas =
    std::is_floating_point_v<T> || std::is_same_v<T, std::complex<float>> ||
    std::is_same_v<T, std::complex<double>>;

using common::blas_view;
using common::BlasView;

// C (row-major [n, m], leading dimension m) = alpha * op(A) op(B) + beta * C.
template <class T>
void gemm(const char* op, bool ta, bool tb, int64_t n, int64_t m, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c) {
  for (int64_t v : {n, m, k, lda, ldb})
    OPD_CHECK(v <= INT_MAX, "{}: matrix dimension {} is too large for BLAS", op, v);
  const auto at = ta ? CblasTrans : CblasNoTrans;
  const auto bt = tb ? CblasTrans : CblasNoTrans;
  const int N = static_cast<int>(n), M = static_cast<int>(m), K = static_cast<int>(k);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, at, bt, N, M, K, alpha, a, static_cast<int>(lda), b,
                static_cast<int>(ldb), beta, c, M);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasRowMajor, at, bt, N, M, K, alpha, a, static_cast<int>(lda), b,
                static_cast<int>(ldb), beta, c, M);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_cgemm(CblasRowMajor, at, bt, N, M, K, &alpha, a, static_cast<int>(lda), b,
                static_cast<int>(ldb), &beta, c, M);
  else
    cblas_zgemm(CblasRowMajor, at, bt, N, M, K, &alpha, a, static_cast<int>(lda), b,
                static_cast<int>(ldb), &beta, c, M);
}

// A matrix operand: where batch `b` starts, its strides, and whether BLAS reads it in place.
template <class C>
struct Operand {
  const C* data;
  int64_t batch_stride, s0, s1;
  Tensor copy;  // owns a contiguous copy when the input could not be read as it lies
};

// Operand, in compute type C, of a [batch, rows, cols] view of elements T (batch_stride 0 for a
// plain matrix). Copied, converting, when C is not T or when a matrix's strides do not suit
// BLAS (the integer loops read any strides).
template <class C, class T>
Operand<C> operand(const Tensor& t, int64_t batch, int64_t rows, int64_t cols) {
  const bool batched = t.dim() == 3;
  const int64_t bs = batched ? t.stride(0) : 0;
  const int64_t s0 = t.stride(-2), s1 = t.stride(-1);
  const T* data = static_cast<const T*>(t.data_ptr());
  if constexpr (std::is_same_v<C, T>) {
    if (!kBlas<T> || blas_view(rows, cols, s0, s1).ok) return {data, bs, s0, s1, Tensor()};
  }
  Tensor copy = cpu::empty_cpu({batch, rows, cols}, common::scalar_type_of<C>());
  C* out = static_cast<C*>(copy.data_ptr());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        out[(b * rows + i) * cols + j] = static_cast<C>(data[b * bs + i * s0 + j * s1]);
  return {out, rows * cols, cols, 1, std::move(copy)};
}

// c[b] = alpha * a[b] @ bm[b] + beta * c[b] for each batch, where c is contiguous
// [batch, n, m] and already holds what beta scales (nothing is read when beta is 0).
template <class T>
void batched_matmul(const char* op, int64_t batch, int64_t n, int64_t m, int64_t k, T alpha,
                    const Operand<T>& a, const Operand<T>& bm, T beta, T* c) {
  if (batch == 0 || n == 0 || m == 0) return;
  if (k == 0) {
    // An empty sum: only the beta term remains.
    for (int64_t i = 0; i < batch * n * m; ++i) c[i] = beta == T(0) ? T(0) : T(beta * c[i]);
    return;
  }
  if constexpr (kBlas<T>) {
    const BlasView va = blas_view(n, k, a.s0, a.s1);
    const BlasView vb = blas_view(k, m, bm.s0, bm.s1);
    for (int64_t b = 0; b < batch; ++b) {
      gemm<T>(op, va.trans, vb.trans, n, m, k, alpha, a.data + b * a.batch_stride, va.ld,
              bm.data + b * bm.batch_stride, vb.ld, beta, c + b * n * m);
    }
  } else {
    // One output row per work item; i-p-j order reads a row of the right operand at a time.
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, k * m));
    cpu::parallel_for(0, batch * n, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / n, i = r % n;
        T* crow = c + r * m;
        for (int64_t j = 0; j < m; ++j) crow[j] = beta == T(0) ? T(0) : T(beta * crow[j]);
        const T* arow = a.data + b * a.batch_stride + i * a.s0;
        const T* bmat = bm.data + b * bm.batch_stride;
        for (int64_t p = 0; p < k; ++p) {
          const T av = T(alpha * arow[p * a.s1]);
          const T* brow = bmat + p * bm.s0;
          for (int64_t j = 0; j < m; ++j) crow[j] = T(crow[j] + av * brow[j * bm.s1]);
        }
      }
    });
  }
}

// The type T multiplies in: float for Half and BFloat16 (BLAS has no 16-bit floats), else T.
template <class T>
using compute_t =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// out[b] = alpha * a[b] @ bm[b] (+ beta * self broadcast, when `self` is given and beta is not
// 0: with beta 0 self is not read, so NaN and inf in it do not reach the result, as PyTorch).
// out is a new contiguous [batch, n, m] (or [n, m]) tensor of elements T.
template <class T>
void product(const char* op, int64_t batch, int64_t n, int64_t m, int64_t k, const Scalar& alpha,
             const Scalar& beta, const Tensor& a, const Tensor& bm, const Tensor* self,
             IntArrayRef self_strides, const Tensor& out) {
  using C = compute_t<T>;
  const C al = alpha.to<C>();
  const C be = self ? beta.to<C>() : C(0);
  const Tensor acc = std::is_same_v<C, T> ? out : cpu::empty_cpu(out.sizes(), kFloat);
  C* c = static_cast<C*>(acc.data_ptr());
  if (be != C(0)) {
    const T* s = static_cast<const T*>(self->data_ptr());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        c[i * m + j] = static_cast<C>(s[i * self_strides[0] + j * self_strides[1]]);
  }
  batched_matmul<C>(op, batch, n, m, k, al, operand<C, T>(a, batch, n, k),
                    operand<C, T>(bm, batch, k, m), be, c);
  if constexpr (!std::is_same_v<C, T>) {
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<T>(c[i]);
  }
}

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  const std::vector<int64_t> sizes = common::mm_sizes(self, mat2);
  Tensor out = cpu::empty_cpu(sizes, self.scalar_type());
  common::visit_dtype(self.scalar_type(), "mm", [&](auto t) {
    product<decltype(t)>("mm", 1, sizes[0], sizes[1], self.size(1), 1, 0, self, mat2, nullptr, {},
                         out);
  });
  return out;
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  const std::vector<int64_t> sizes = common::bmm_sizes(self, mat2);
  Tensor out = cpu::empty_cpu(sizes, self.scalar_type());
  common::visit_dtype(self.scalar_type(), "bmm", [&](auto t) {
    product<decltype(t)>("bmm", sizes[0], sizes[1], sizes[2], self.size(2), 1, 0, self, mat2,
                         nullptr, {}, out);
  });
  return out;
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha) {
  const std::vector<int64_t> sizes = common::addmm_sizes(self, mat1, mat2);
  const std::vector<int64_t> self_strides = common::addmm_self_strides(self, sizes);
  Tensor out = cpu::empty_cpu(sizes, mat1.scalar_type());
  common::visit_dtype(mat1.scalar_type(), "addmm", [&](auto t) {
    product<decltype(t)>("addmm", 1, sizes[0], sizes[1], mat1.size(1), alpha, beta, mat1, mat2,
                         &self, self_strides, out);
  });
  return out;
}

}  // namespace opd::native
