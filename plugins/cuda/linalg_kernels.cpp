// CUDA kernels of the matrix products: mm, bmm, addmm. Shapes, dtypes and errors come from
// common/linalg_shape.h, as the CPU's and Meta's do. Float32 and Float64 go to cuBLAS's gemm,
// Float16 and BFloat16 to cublasGemmEx multiplying in float, ComplexFloat and ComplexDouble to
// cublasCgemm / cublasZgemm, all reading a transposed operand in place (CUBLAS_OP_T) rather than
// copying it; integer types go to the tiled kernel of kernels/linalg.cu, which reads any strides.

#include <cuComplex.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <type_traits>

#include "common/linalg_shape.h"
#include "common/type_dispatch.h"
#include "cuda/allocator.h"
#include "cuda/blas_handle.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/geometry.h"
#include "cuda/kernels/linalg_args.h"
#include "opd/half.h"
#include "opd/native/CUDA.h"

namespace opd::native {

namespace {

namespace kern = cuda::kern;

// Note [Row-major products in cuBLAS]
// cuBLAS is column-major. A dense row-major C [n, m] read column-major is Cᵀ, and Cᵀ = Bᵀ·Aᵀ, so
// C = A·B is cuBLAS's product of B by A with n and m swapped: gemm(op_b, op_a, m, n, k, B, A, C,
// ldc = m). A row-major operand X [rows, cols] (column stride 1, row stride ld) read column-major
// with leading dimension ld is Xᵀ, which is what that product takes: CUBLAS_OP_N. One stored
// transposed (row stride 1, column stride ld) reads as X: CUBLAS_OP_T. Either way cuBLAS's bound
// on ld is blas_view's, so no other check is needed.

using common::blas_view;
using common::BlasView;

template <class T>
inline constexpr bool kHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <class T>
inline constexpr bool kComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
template <class T>
inline constexpr bool kBlas = std::is_floating_point_v<T> || kHalfLike<T> || kComplex<T>;

// The type alpha and beta take, and products are summed in: float for Half and BFloat16 (as the
// CPU's float copies), else T.
template <class T>
using compute_t = std::conditional_t<kHalfLike<T>, float, T>;

// A matrix operand of a product: its first element, batch stride (0 for a plain matrix) and
// element strides, and the contiguous copy that owns its memory when the input could not be read
// as it lies.
struct Operand {
  Tensor copy;
  const void* data = nullptr;
  int64_t batch_stride = 0;
  int64_t s0 = 0, s1 = 0;
};

// The [rows, cols] (or [batch, rows, cols]) matrices of `t`, copied when `for_blas` and their
// strides do not suit cuBLAS. REQUIRES: rows and cols > 0.
Operand operand(const Tensor& t, int64_t rows, int64_t cols, bool for_blas) {
  Operand o;
  const Tensor* src = &t;
  if (for_blas && !blas_view(rows, cols, t.stride(-2), t.stride(-1)).ok) {
    o.copy = t.contiguous();
    src = &o.copy;
  }
  o.data = src->data_ptr();
  o.batch_stride = src->dim() == 3 ? src->stride(0) : 0;
  o.s0 = src->stride(-2);
  o.s1 = src->stride(-1);
  return o;
}

// One cuBLAS product in row-major terms (see Note [Row-major products in cuBLAS]): for each
// i < batch, c[i] (dense [n, m]) = alpha * a[i] [n, k] @ b[i] [k, m] + beta * c[i], with c not
// read when beta is 0. Batch strides are in elements.
struct Gemm {
  int64_t batch = 1, n = 0, m = 0, k = 0;
  const void* a = nullptr;
  BlasView va;
  int64_t stride_a = 0;
  const void* b = nullptr;
  BlasView vb;
  int64_t stride_b = 0;
  void* c = nullptr;
};

// cuBLAS takes one call's batch count as an int.
constexpr int64_t kMaxBatchPerCall = INT_MAX;

cublasOperation_t op_of(const BlasView& v) { return v.trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Float16 / BFloat16 (`type`) operands and result, products summed in float (CUBLAS_COMPUTE_32F)
// with float alpha and beta: `count` products of g's shape from the given pointers.
// REQUIRES: count and g's sizes and leading dimensions fit an int (run_gemm checks).
void gemm_16bit(cublasHandle_t h, cudaDataType_t type, const Gemm& g, int count, const void* a,
                const void* b, void* c, float alpha, float beta) {
  const int n = static_cast<int>(g.n), m = static_cast<int>(g.m), k = static_cast<int>(g.k);
  const int lda = static_cast<int>(g.va.ld), ldb = static_cast<int>(g.vb.ld);
  if (count == 1) {
    cuda::check_cublas(
        cublasGemmEx(h, op_of(g.vb), op_of(g.va), m, n, k, &alpha, b, type, ldb, a, type, lda,
                     &beta, c, type, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  } else {
    cuda::check_cublas(
        cublasGemmStridedBatchedEx(h, op_of(g.vb), op_of(g.va), m, n, k, &alpha, b, type, ldb,
                                   g.stride_b, a, type, lda, g.stride_a, &beta, c, type, m,
                                   g.n * g.m, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
  }
}

// cuBLAS's functions for std::complex<float> and <double>, whose arrays are laid out as cuComplex
// and cuDoubleComplex. A single value (alpha, beta) is converted by make() rather than cast:
// cuComplex is aligned to its whole size, std::complex only to that of one part.
template <class T>
struct ComplexBlas;
template <>
struct ComplexBlas<std::complex<float>> {
  using type = cuComplex;
  static type make(std::complex<float> v) { return make_cuComplex(v.real(), v.imag()); }
  static constexpr auto gemm = &cublasCgemm;
  static constexpr auto gemm_batched = &cublasCgemmStridedBatched;
  static constexpr auto scal = &cublasCscal;
  static constexpr const char* kGemm = "cublasCgemm";
  static constexpr const char* kGemmBatched = "cublasCgemmStridedBatched";
  static constexpr const char* kScal = "cublasCscal";
};
template <>
struct ComplexBlas<std::complex<double>> {
  using type = cuDoubleComplex;
  static type make(std::complex<double> v) { return make_cuDoubleComplex(v.real(), v.imag()); }
  static constexpr auto gemm = &cublasZgemm;
  static constexpr auto gemm_batched = &cublasZgemmStridedBatched;
  static constexpr auto scal = &cublasZscal;
  static constexpr const char* kGemm = "cublasZgemm";
  static constexpr const char* kGemmBatched = "cublasZgemmStridedBatched";
  static constexpr const char* kScal = "cublasZscal";
};

// Runs `g` on device `index` (the current device) for elements T: float, double, Half,
// BFloat16, or std::complex of float or double (laid out as cuComplex / cuDoubleComplex).
template <class T>
void run_gemm(const char* op, int index, const Gemm& g, compute_t<T> alpha, compute_t<T> beta) {
  for (int64_t v : {g.n, g.m, g.k, g.va.ld, g.vb.ld})
    OPD_CHECK(v <= INT_MAX, "{}: matrix dimension {} is too large for BLAS", op, v);
  cublasHandle_t h = cuda::blas_handle(index);
  const int n = static_cast<int>(g.n), m = static_cast<int>(g.m), k = static_cast<int>(g.k);
  const int lda = static_cast<int>(g.va.ld), ldb = static_cast<int>(g.vb.ld);
  const cublasOperation_t opa = op_of(g.va), opb = op_of(g.vb);
  const int64_t stride_c = g.n * g.m;
  for (int64_t b0 = 0; b0 < g.batch; b0 += kMaxBatchPerCall) {
    const int count = static_cast<int>(std::min(kMaxBatchPerCall, g.batch - b0));
    const T* a = static_cast<const T*>(g.a) + b0 * g.stride_a;
    const T* b = static_cast<const T*>(g.b) + b0 * g.stride_b;
    T* c = static_cast<T*>(g.c) + b0 * stride_c;
    if constexpr (std::is_same_v<T, float>) {
      if (count == 1) {
        cuda::check_cublas(cublasSgemm(h, opb, opa, m, n, k, &alpha, b, ldb, a, lda, &beta, c, m),
                           "cublasSgemm");
      } else {
        cuda::check_cublas(
            cublasSgemmStridedBatched(h, opb, opa, m, n, k, &alpha, b, ldb, g.stride_b, a, lda,
                                      g.stride_a, &beta, c, m, stride_c, count),
            "cublasSgemmStridedBatched");
      }
    } else if constexpr (std::is_same_v<T, double>) {
      if (count == 1) {
        cuda::check_cublas(cublasDgemm(h, opb, opa, m, n, k, &alpha, b, ldb, a, lda, &beta, c, m),
                           "cublasDgemm");
      } else {
        cuda::check_cublas(
            cublasDgemmStridedBatched(h, opb, opa, m, n, k, &alpha, b, ldb, g.stride_b, a, lda,
                                      g.stride_a, &beta, c, m, stride_c, count),
            "cublasDgemmStridedBatched");
      }
    } else if constexpr (kComplex<T>) {
      using B = ComplexBlas<T>;
      using Z = typename B::type;
      const Z z_alpha = B::make(alpha), z_beta = B::make(beta);
      const auto* za = reinterpret_cast<const Z*>(a);
      const auto* zb = reinterpret_cast<const Z*>(b);
      auto* zc = reinterpret_cast<Z*>(c);
      if (count == 1) {
        cuda::check_cublas(
            B::gemm(h, opb, opa, m, n, k, &z_alpha, zb, ldb, za, lda, &z_beta, zc, m), B::kGemm);
      } else {
        cuda::check_cublas(B::gemm_batched(h, opb, opa, m, n, k, &z_alpha, zb, ldb, g.stride_b, za,
                                           lda, g.stride_a, &z_beta, zc, m, stride_c, count),
                           B::kGemmBatched);
      }
    } else {
      static_assert(kHalfLike<T>);
      gemm_16bit(h, std::is_same_v<T, Half> ? CUDA_R_16F : CUDA_R_16BF, g, count, a, b, c, alpha,
                 beta);
    }
  }
}

// A compute-type value as a kernel argument (both forms; the kernel reads the one of its dtype).
template <class C>
kern::ScalarArg scalar_arg_of(C v) {
  kern::ScalarArg s;
  s.is_set = true;
  s.f = static_cast<double>(v);
  if constexpr (std::is_integral_v<C>) s.i = static_cast<int64_t>(v);
  return s;
}

// out *= factor for complex elements (cuBLAS's scal, at most INT_MAX elements per call), where
// launch_scale takes the real types.
template <class T>
void scale_complex(int index, const Tensor& out, T factor) {
  using B = ComplexBlas<T>;
  using Z = typename B::type;
  cublasHandle_t h = cuda::blas_handle(index);
  auto* data = static_cast<T*>(out.data_ptr());
  for (int64_t done = 0; done < out.numel(); done += INT_MAX) {
    const int count = static_cast<int>(std::min<int64_t>(INT_MAX, out.numel() - done));
    const Z z = B::make(factor);
    cuda::check_cublas(B::scal(h, count, &z, reinterpret_cast<Z*>(data + done), 1), B::kScal);
  }
}

// out = self broadcast (strides from common::addmm_self_strides, expand's). A zero-dim CPU self,
// which check_same_device lets join CUDA operands, is a fill with its value.
void copy_self(const Tensor& self, const Tensor& out, IntArrayRef strides) {
  if (self.is_cpu()) {
    out.fill_(self.item());
  } else {
    out.copy_(make_view(self, out.sizes(), strides, self.storage_offset()));
  }
}

// out[b] = alpha * a[b] @ bm[b] (+ beta * self broadcast, when `self` is given and beta is not
// 0: with beta 0 self is not read, so NaN and inf in it do not reach the result, as PyTorch).
// out is a new dense [batch, n, m] (or [n, m]) tensor of elements T on device `index`, the
// current device. Alpha and beta convert to the compute type with the CPU's checks.
template <class T>
void product(const char* op, int index, int64_t batch, int64_t n, int64_t m, int64_t k,
             const Scalar& alpha, const Scalar& beta, const Tensor& a, const Tensor& bm,
             const Tensor* self, IntArrayRef self_strides, const Tensor& out) {
  using C = compute_t<T>;
  const C al = alpha.to<C>();
  const C be = self ? beta.to<C>() : C(0);
  if (batch == 0 || n == 0 || m == 0) return;
  if (be != C(0)) copy_self(*self, out, self_strides);
  const cudaStream_t stream = cuda::current_stream(index);
  const kern::Dtype dtype = cuda::kernel_dtype(out.scalar_type(), op, /*with_complex=*/true);
  if (k == 0) {
    // An empty sum: only the beta term remains.
    if (be == C(0)) {
      OPD_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.numel() * out.element_size(), stream));
    } else if (be != C(1)) {
      if constexpr (kComplex<T>) {
        scale_complex<T>(index, out, be);
      } else {
        cuda::check_launch(
            kern::launch_scale(dtype, out.data_ptr(), out.numel(), scalar_arg_of(be), stream),
            "matmul_scale");
      }
    }
    return;
  }
  if constexpr (kBlas<T>) {
    const Operand oa = operand(a, n, k, /*for_blas=*/true);
    const Operand ob = operand(bm, k, m, /*for_blas=*/true);
    Gemm g;
    g.batch = batch;
    g.n = n;
    g.m = m;
    g.k = k;
    g.a = oa.data;
    g.va = blas_view(n, k, oa.s0, oa.s1);
    g.stride_a = oa.batch_stride;
    g.b = ob.data;
    g.vb = blas_view(k, m, ob.s0, ob.s1);
    g.stride_b = ob.batch_stride;
    g.c = out.data_ptr();
    OPD_INTERNAL_ASSERT(g.va.ok && g.vb.ok, "{}: a contiguous operand does not suit cuBLAS", op);
    run_gemm<T>(op, index, g, al, be);
  } else {
    const Operand oa = operand(a, n, k, /*for_blas=*/false);
    const Operand ob = operand(bm, k, m, /*for_blas=*/false);
    const kern::MatrixArg ma{oa.data, oa.batch_stride, oa.s0, oa.s1};
    const kern::MatrixArg mb{ob.data, ob.batch_stride, ob.s0, ob.s1};
    cuda::check_launch(kern::launch_integer_matmul(dtype, batch, n, m, k, scalar_arg_of(al), ma, mb,
                                                   scalar_arg_of(be), out.data_ptr(), stream),
                       "integer_matmul");
  }
}

// Calls f(T{}) for the element type of `dtype`. Bool never gets here (common::check_matmul_dtype
// refused it).
template <class F>
void visit_matmul_dtype(ScalarType dtype, const char* op, F&& f) {
  common::visit_dtype</*kComplex=*/true>(dtype, op, [&](auto t) {
    if constexpr (std::is_same_v<decltype(t), bool>) {
      OPD_INTERNAL_ASSERT(false, "{}: Bool passed the dtype check", op);
    } else {
      f(t);
    }
  });
}

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  const std::vector<int64_t> sizes = common::mm_sizes(self, mat2);
  const int index = cuda::device_index(self.device());
  cuda::DeviceGuard guard(index);
  Tensor out = cuda::empty_cuda(sizes, self.scalar_type(), index);
  visit_matmul_dtype(self.scalar_type(), "mm", [&](auto t) {
    product<decltype(t)>("mm", index, 1, sizes[0], sizes[1], self.size(1), 1, 0, self, mat2,
                         nullptr, {}, out);
  });
  return out;
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  const std::vector<int64_t> sizes = common::bmm_sizes(self, mat2);
  const int index = cuda::device_index(self.device());
  cuda::DeviceGuard guard(index);
  Tensor out = cuda::empty_cuda(sizes, self.scalar_type(), index);
  visit_matmul_dtype(self.scalar_type(), "bmm", [&](auto t) {
    product<decltype(t)>("bmm", index, sizes[0], sizes[1], sizes[2], self.size(2), 1, 0, self, mat2,
                         nullptr, {}, out);
  });
  return out;
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha) {
  const std::vector<int64_t> sizes = common::addmm_sizes(self, mat1, mat2);
  const std::vector<int64_t> self_strides = common::addmm_self_strides(self, sizes);
  const int index = cuda::device_index(mat1.device());
  cuda::DeviceGuard guard(index);
  Tensor out = cuda::empty_cuda(sizes, mat1.scalar_type(), index);
  visit_matmul_dtype(mat1.scalar_type(), "addmm", [&](auto t) {
    product<decltype(t)>("addmm", index, 1, sizes[0], sizes[1], mat1.size(1), alpha, beta, mat1,
                         mat2, &self, self_strides, out);
  });
  return out;
}

}  // namespace opd::native
