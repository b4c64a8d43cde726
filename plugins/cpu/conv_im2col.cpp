// Convolution as matrix products (the path of float64 and of what oneDNN does not take): each
// sample's input is unfolded into columns, one per output position, each holding the input
// values the kernel sees there (im2col); the weights of a group times those columns are the
// output. Backward data folds the columns back, summing where windows overlap (col2im);
// backward weights multiplies the output gradient by the columns. Spatial ranks 1 to 3 run as
// rank 3 with leading sizes 1.

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/conv_backend.h"
#include "opd/error.h"

namespace opd::native::conv {
namespace {

// The geometry in rank 3: [d, h, w] for each list.
struct Geo3 {
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
  int64_t in_numel() const { return in[0] * in[1] * in[2]; }
  int64_t out_numel() const { return out[0] * out[1] * out[2]; }
  int64_t k_numel() const { return k[0] * k[1] * k[2]; }
};

Geo3 geo3(const Geometry& g) {
  Geo3 r{};
  const size_t dims = g.stride.size();
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i >= 3 - dims;
    const size_t j = real ? i - (3 - dims) : 0;
    r.in[i] = real ? g.src[2 + j] : 1;
    r.out[i] = real ? g.dst[2 + j] : 1;
    r.k[i] = real ? g.weight[2 + j] : 1;
    r.s[i] = real ? g.stride[j] : 1;
    r.p[i] = real ? g.pad_l[j] : 0;
    r.d[i] = real ? g.dilation[j] : 1;
  }
  return r;
}

// Calls fn(row, column, input offset or -1) over the column matrix of `channels` channels.
template <class Fn>
void for_each_column_entry(const Geo3& g, int64_t channels, Fn fn) {
  const int64_t L = g.out_numel();
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kd = 0; kd < g.k[0]; ++kd) {
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        for (int64_t kw = 0; kw < g.k[2]; ++kw) {
          const int64_t row = ((c * g.k[0] + kd) * g.k[1] + kh) * g.k[2] + kw;
          int64_t col = 0;
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh) {
              const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
              const bool dh_in = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
              const int64_t base = (c * g.in[0] + id) * g.in[1] + ih;
              for (int64_t ow = 0; ow < g.out[2]; ++ow, ++col) {
                const int64_t iw = ow * g.s[2] - g.p[2] + kw * g.d[2];
                const bool in = dh_in && iw >= 0 && iw < g.in[2];
                fn(row * L + col, in ? base * g.in[2] + iw : -1);
              }
            }
          }
        }
      }
    }
  }
}

template <class T>
void im2col(const T* x, const Geo3& g, int64_t channels, T* col) {
  for_each_column_entry(g, channels,
                        [&](int64_t at, int64_t from) { col[at] = from < 0 ? T(0) : x[from]; });
}

template <class T>
void col2im(const T* col, const Geo3& g, int64_t channels, T* x) {
  std::fill(x, x + channels * g.in_numel(), T(0));
  for_each_column_entry(g, channels, [&](int64_t at, int64_t to) {
    if (to >= 0) x[to] += col[at];
  });
}

// C (m x n) = op(A) op(B) + beta C, row-major.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// The sizes of one group's matrices: weight (O/g x C/g*K), columns (C/g*K x L), dst (O/g x L).
struct Shapes {
  int64_t n, c_g, o_g, K, L, in_numel;
};

Shapes shapes(const Geometry& g, const Geo3& g3) {
  return {g.src[0],     g.src[1] / g.groups, g.dst[1] / g.groups,
          g3.k_numel(), g3.out_numel(),      g3.in_numel()};
}

template <class T>
void forward(const T* x, const T* w, T* y, const Geometry& g) {
  const Geo3 g3 = geo3(g);
  const Shapes s = shapes(g, g3);
  std::vector<T> col(static_cast<size_t>(s.c_g * s.K * s.L));
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      im2col(x + (n * g.groups + gr) * s.c_g * s.in_numel, g3, s.c_g, col.data());
      gemm(false, false, s.o_g, s.L, s.c_g * s.K, w + gr * s.o_g * s.c_g * s.K, s.c_g * s.K,
           col.data(), s.L, T(0), y + (n * g.groups + gr) * s.o_g * s.L, s.L);
    }
  }
}

template <class T>
void backward_data(const T* dy, const T* w, T* dx, const Geometry& g) {
  const Geo3 g3 = geo3(g);
  const Shapes s = shapes(g, g3);
  std::vector<T> col(static_cast<size_t>(s.c_g * s.K * s.L));
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      gemm(true, false, s.c_g * s.K, s.L, s.o_g, w + gr * s.o_g * s.c_g * s.K, s.c_g * s.K,
           dy + (n * g.groups + gr) * s.o_g * s.L, s.L, T(0), col.data(), s.L);
      col2im(col.data(), g3, s.c_g, dx + (n * g.groups + gr) * s.c_g * s.in_numel);
    }
  }
}

template <class T>
void backward_weights(const T* x, const T* dy, T* dw, const Geometry& g) {
  const Geo3 g3 = geo3(g);
  const Shapes s = shapes(g, g3);
  std::fill(dw, dw + g.groups * s.o_g * s.c_g * s.K, T(0));
  std::vector<T> col(static_cast<size_t>(s.c_g * s.K * s.L));
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      im2col(x + (n * g.groups + gr) * s.c_g * s.in_numel, g3, s.c_g, col.data());
      gemm(false, true, s.o_g, s.c_g * s.K, s.L, dy + (n * g.groups + gr) * s.o_g * s.L, s.L,
           col.data(), s.L, T(1), dw + gr * s.o_g * s.c_g * s.K, s.c_g * s.K);
    }
  }
}

template <class Fn>
void by_dtype(const Tensor& t, Fn fn) {
  switch (t.scalar_type()) {
    case kFloat:
      fn(float{});
      break;
    case kDouble:
      fn(double{});
      break;
    default:
      OPD_INTERNAL_ASSERT(false, "im2col convolution of {}", to_string(t.scalar_type()));
  }
}

}  // namespace

void im2col_forward(const Tensor& src, const Tensor& weight, const Tensor& dst, const Geometry& g) {
  by_dtype(src, [&](auto tv) {
    using T = decltype(tv);
    forward(src.data_ptr<T>(), weight.data_ptr<T>(), dst.data_ptr<T>(), g);
  });
}

void im2col_backward_data(const Tensor& diff_dst, const Tensor& weight, const Tensor& diff_src,
                          const Geometry& g) {
  by_dtype(diff_dst, [&](auto tv) {
    using T = decltype(tv);
    backward_data(diff_dst.data_ptr<T>(), weight.data_ptr<T>(), diff_src.data_ptr<T>(), g);
  });
}

void im2col_backward_weights(const Tensor& src, const Tensor& diff_dst, const Tensor& diff_weight,
                             const Geometry& g) {
  by_dtype(src, [&](auto tv) {
    using T = decltype(tv);
    backward_weights(src.data_ptr<T>(), diff_dst.data_ptr<T>(), diff_weight.data_ptr<T>(), g);
  });
}

}  // namespace opd::native::conv
