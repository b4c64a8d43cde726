// CPU kernels of native_layer_norm, native_group_norm, native_batch_norm and their backward
// operators. Checks, shapes and dtypes come from common/norm_shape.h (shared with Meta).
//
// Note [Normalisation rows]
// Every kernel here works on contiguous rows: layer_norm's rows are the N trailing elements of
// each of M leading positions; group_norm's are the C/group * HxW elements of one (sample, group);
// batch_norm's are the HxW elements of one (sample, channel), which a channel's statistics sum
// over the batch. A non-contiguous input (channels-last included) is made contiguous first, and a
// channels-last input's output is given back channels-last, as PyTorch's. Statistics are two-pass
// (the mean, then the squared deviations), accumulated in opmath_t (float for float and bfloat16,
// double for double) over eight independent partial sums, which the compiler keeps in vector
// registers; rows are split over the pool. The backward formulas are PyTorch's.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "common/norm_shape.h"
#include "common/output.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

using common::opmath_t;

constexpr int64_t kGrain = 32768;  // elements per chunk of rows

// Rows per chunk for rows of `len` elements.
int64_t row_grain(int64_t len) { return std::max<int64_t>(1, kGrain / std::max<int64_t>(len, 1)); }

// Sum of x[0..n) in A, eight lanes at a time.
template <class T, class A>
A row_sum(const T* x, int64_t n) {
  A s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) s[k] += static_cast<A>(x[i + k]);
  }
  A sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) sum += static_cast<A>(x[i]);
  return sum;
}

// Sum of (x - mean)^2 over x[0..n).
template <class T, class A>
A row_sq_dev(const T* x, int64_t n, A mean) {
  A s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) {
      const A d = static_cast<A>(x[i + k]) - mean;
      s[k] += d * d;
    }
  }
  A sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) {
    const A d = static_cast<A>(x[i]) - mean;
    sum += d * d;
  }
  return sum;
}

// Sums of d and d * x over a row, d = dy (times g when g is given), eight lanes at a time.
template <class T, class A, bool kWeighted>
void row_dot_impl(const T* __restrict dy, const T* __restrict x, const A* __restrict g, int64_t n,
                  A& sum_dy, A& sum_dy_x) {
  A a[8] = {}, b[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) {
      A d = static_cast<A>(dy[i + k]);
      if constexpr (kWeighted) d *= g[i + k];
      a[k] += d;
      b[k] += d * static_cast<A>(x[i + k]);
    }
  }
  A sa = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  A sb = ((b[0] + b[1]) + (b[2] + b[3])) + ((b[4] + b[5]) + (b[6] + b[7]));
  for (; i < n; ++i) {
    A d = static_cast<A>(dy[i]);
    if constexpr (kWeighted) d *= g[i];
    sa += d;
    sb += d * static_cast<A>(x[i]);
  }
  sum_dy = sa;
  sum_dy_x = sb;
}

template <class T, class A>
void row_dot(const T* dy, const T* x, const A* g, int64_t n, A& sum_dy, A& sum_dy_x) {
  if (g) return row_dot_impl<T, A, true>(dy, x, g, n, sum_dy, sum_dy_x);
  row_dot_impl<T, A, false>(dy, x, nullptr, n, sum_dy, sum_dy_x);
}

// Element i of a 1-D tensor (through its stride), as double.
double read_at(const Tensor& t, int64_t i) {
  const int64_t at = i * (t.dim() == 0 ? 0 : t.stride(0));
  switch (t.scalar_type()) {
    case kFloat:
      return static_cast<const float*>(t.data_ptr())[at];
    case kDouble:
      return static_cast<const double*>(t.data_ptr())[at];
    case kBFloat16:
      return static_cast<float>(static_cast<const BFloat16*>(t.data_ptr())[at]);
    case kHalf:
      return static_cast<float>(static_cast<const Half*>(t.data_ptr())[at]);
    default:
      OPD_CHECK(false, "expected a floating point tensor, got '{}'", t.scalar_type());
  }
}

void write_at(const Tensor& t, int64_t i, double v) {
  const int64_t at = i * (t.dim() == 0 ? 0 : t.stride(0));
  switch (t.scalar_type()) {
    case kFloat:
      static_cast<float*>(t.data_ptr())[at] = static_cast<float>(v);
      return;
    case kDouble:
      static_cast<double*>(t.data_ptr())[at] = v;
      return;
    case kBFloat16:
      static_cast<BFloat16*>(t.data_ptr())[at] = BFloat16(static_cast<float>(v));
      return;
    case kHalf:
      static_cast<Half*>(t.data_ptr())[at] = Half(static_cast<float>(v));
      return;
    default:
      OPD_CHECK(false, "expected a floating point tensor, got '{}'", t.scalar_type());
  }
}

// An optional parameter's n values in A (contiguous, row-major), or none when undefined.
template <class A>
std::vector<A> load(const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return {};
  const Tensor c = t->contiguous();
  std::vector<A> out(static_cast<size_t>(c.numel()));
  const Tensor flat = c.dim() == 1 ? c : opd::reshape(c, {c.numel()});
  for (int64_t i = 0; i < c.numel(); ++i) out[i] = static_cast<A>(read_at(flat, i));
  return out;
}

bool has(const std::optional<Tensor>& t) { return t && t->defined(); }

// The output in the input's memory format (Note [Normalisation rows]).
Tensor in_format_of(const Tensor& out, const Tensor& input) {
  const MemoryFormat f = common::norm_memory_format(input);
  return f == MemoryFormat::Contiguous ? out : out.contiguous(f);
}

// Splits [0, n) into at most get_num_threads() chunks and runs fn(chunk, begin, end) on each.
template <class F>
int64_t for_chunks(int64_t n, int64_t grain, F&& fn) {
  const int64_t chunks = std::max<int64_t>(
      1, std::min(cpu::get_num_threads(), (n + grain - 1) / std::max<int64_t>(grain, 1)));
  const int64_t per = (n + chunks - 1) / chunks;
  cpu::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) fn(c, c * per, std::min(n, (c + 1) * per));
  });
  return chunks;
}

// One row of layer_norm's backward (PyTorch's formula): dx = a * dy * g + b * x + c with
// a = rstd, b = (db * mean - ds) * a^3 / N, c = -b * mean - db * a / N, ds = sum(dy * g * x),
// db = sum(dy * g); and dgamma += dy * (x - mean) * rstd, dbeta += dy. Null pointers skip a
// part. Loops over restrict pointers, so that they vectorise.
template <class T, class A>
void layer_norm_backward_row(const T* __restrict dy, const T* __restrict x, const A* __restrict g,
                             T* __restrict dx, A* __restrict pg, A* __restrict pb, int64_t N, A mu,
                             A a, A scale) {
  if (dx) {
    A db = 0, ds = 0;
    row_dot<T, A>(dy, x, g, N, db, ds);
    const A b = (db * mu - ds) * a * a * a * scale;
    const A c = -b * mu - db * a * scale;
    if (g) {
      for (int64_t j = 0; j < N; ++j)
        dx[j] = static_cast<T>(a * static_cast<A>(dy[j]) * g[j] + b * static_cast<A>(x[j]) + c);
    } else {
      for (int64_t j = 0; j < N; ++j)
        dx[j] = static_cast<T>(a * static_cast<A>(dy[j]) + b * static_cast<A>(x[j]) + c);
    }
  }
  const A sh = -mu * a;
  if (pg && pb) {
    for (int64_t j = 0; j < N; ++j) {
      const A d = static_cast<A>(dy[j]);
      pg[j] += d * (static_cast<A>(x[j]) * a + sh);
      pb[j] += d;
    }
  } else if (pg) {
    for (int64_t j = 0; j < N; ++j)
      pg[j] += static_cast<A>(dy[j]) * (static_cast<A>(x[j]) * a + sh);
  } else if (pb) {
    for (int64_t j = 0; j < N; ++j) pb[j] += static_cast<A>(dy[j]);
  }
}

}  // namespace

// ---- layer_norm ---------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     double eps) {
  const common::LayerNormMeta m = common::layer_norm_meta(input, normalized_shape, weight, bias);
  const Tensor X = input.contiguous();
  Tensor Y = cpu::empty_cpu(input.sizes(), input.scalar_type());
  Tensor mean = cpu::empty_cpu(m.stat_sizes, input.scalar_type());
  Tensor rstd = cpu::empty_cpu(m.stat_sizes, input.scalar_type());
  const int64_t M = m.M, N = m.N;
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, input.scalar_type(), "LayerNormKernelImpl", [&] {
    using A = opmath_t<scalar_t>;
    const std::vector<A> g = load<A>(weight), b = load<A>(bias);
    const scalar_t* x = static_cast<const scalar_t*>(X.data_ptr());
    scalar_t* y = static_cast<scalar_t*>(Y.data_ptr());
    scalar_t* pm = static_cast<scalar_t*>(mean.data_ptr());
    scalar_t* pr = static_cast<scalar_t*>(rstd.data_ptr());
    cpu::parallel_for(0, M, row_grain(N), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const scalar_t* xi = x + i * N;
        scalar_t* yi = y + i * N;
        const A mu = row_sum<scalar_t, A>(xi, N) / static_cast<A>(N);
        const A var = row_sq_dev<scalar_t, A>(xi, N, mu) / static_cast<A>(N);
        const A rs = A(1) / std::sqrt(std::max(var, A(0)) + static_cast<A>(eps));
        const A shift = -mu * rs;
        if (!g.empty() && !b.empty()) {
          for (int64_t j = 0; j < N; ++j)
            yi[j] = static_cast<scalar_t>((static_cast<A>(xi[j]) * rs + shift) * g[j] + b[j]);
        } else if (!g.empty()) {
          for (int64_t j = 0; j < N; ++j)
            yi[j] = static_cast<scalar_t>((static_cast<A>(xi[j]) * rs + shift) * g[j]);
        } else if (!b.empty()) {
          for (int64_t j = 0; j < N; ++j)
            yi[j] = static_cast<scalar_t>(static_cast<A>(xi[j]) * rs + shift + b[j]);
        } else {
          for (int64_t j = 0; j < N; ++j)
            yi[j] = static_cast<scalar_t>(static_cast<A>(xi[j]) * rs + shift);
        }
        pm[i] = static_cast<scalar_t>(mu);
        pr[i] = static_cast<scalar_t>(rs);
      }
    });
  });
  return {Y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean,
    const Tensor& rstd, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    std::array<bool, 3> output_mask) {
  const common::LayerNormMeta m = common::layer_norm_meta(input, normalized_shape, weight, bias);
  const int64_t M = m.M, N = m.N;
  const Tensor X = input.contiguous(), dY = grad_out.contiguous();
  const Tensor mean_c = mean.contiguous(), rstd_c = rstd.contiguous();
  Tensor dX, dgamma, dbeta;
  if (output_mask[0]) dX = cpu::empty_cpu(input.sizes(), input.scalar_type());
  if (output_mask[1] && has(weight))
    dgamma = cpu::empty_cpu(weight->sizes(), weight->scalar_type());
  if (output_mask[2] && has(bias)) dbeta = cpu::empty_cpu(bias->sizes(), bias->scalar_type());
  OPD_DISPATCH_FLOATING_TYPES_AND(
      kBFloat16, input.scalar_type(), "LayerNormBackwardKernelImpl", [&] {
        using A = opmath_t<scalar_t>;
        const std::vector<A> g = load<A>(weight);
        const scalar_t* x = static_cast<const scalar_t*>(X.data_ptr());
        const scalar_t* dy = static_cast<const scalar_t*>(dY.data_ptr());
        const scalar_t* pm = static_cast<const scalar_t*>(mean_c.data_ptr());
        const scalar_t* pr = static_cast<const scalar_t*>(rstd_c.data_ptr());
        // One pass over the rows computes every requested gradient while a row is in cache: dX row
        // by row, dgamma/dbeta as per-chunk partial sums over rows, summed at the end.
        const bool want_g = dgamma.defined(), want_b = dbeta.defined();
        const int64_t max_chunks =
            std::max<int64_t>(1, std::min<int64_t>(cpu::get_num_threads(), M));
        std::vector<A> part(want_g || want_b ? static_cast<size_t>(max_chunks * 2 * N) : 0, A(0));
        scalar_t* dx = dX.defined() ? static_cast<scalar_t*>(dX.data_ptr()) : nullptr;
        const A scale = A(1) / static_cast<A>(N);
        const int64_t chunks =
            for_chunks(M, std::max<int64_t>(1, (M + max_chunks - 1) / max_chunks),
                       [&](int64_t c, int64_t begin, int64_t end) {
                         A* pg = want_g || want_b ? part.data() + c * 2 * N : nullptr;
                         A* pb = pg ? pg + N : nullptr;
                         const A* gp = g.empty() ? nullptr : g.data();
                         for (int64_t i = begin; i < end; ++i) {
                           const A mu = static_cast<A>(pm[i]), a = static_cast<A>(pr[i]);
                           layer_norm_backward_row<scalar_t, A>(
                               dy + i * N, x + i * N, gp, dx ? dx + i * N : nullptr,
                               want_g ? pg : nullptr, want_b ? pb : nullptr, N, mu, a, scale);
                         }
                       });
        auto finish = [&](Tensor& out, int64_t offset) {
          if (!out.defined()) return;
          const Tensor flat = opd::reshape(out, {N});
          for (int64_t j = 0; j < N; ++j) {
            A sum = 0;
            for (int64_t c = 0; c < chunks; ++c) sum += part[c * 2 * N + offset + j];
            write_at(flat, j, static_cast<double>(sum));
          }
        };
        finish(dgamma, 0);
        finish(dbeta, N);
      });
  return {dX, dgamma, dbeta};
}

// ---- group_norm ---------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N,
                                                     int64_t C, int64_t HxW, int64_t group,
                                                     double eps) {
  common::check_group_norm(input, weight, bias, N, C, HxW, group);
  const Tensor X = input.contiguous();
  Tensor Y = cpu::empty_cpu(input.sizes(), input.scalar_type());
  Tensor mean = cpu::empty_cpu({N, group}, input.scalar_type());
  Tensor rstd = cpu::empty_cpu({N, group}, input.scalar_type());
  const int64_t D = C / group, row = D * HxW;
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, input.scalar_type(), "GroupNormKernelImpl", [&] {
    using A = opmath_t<scalar_t>;
    const std::vector<A> g = load<A>(weight), b = load<A>(bias);
    const scalar_t* x = static_cast<const scalar_t*>(X.data_ptr());
    scalar_t* y = static_cast<scalar_t*>(Y.data_ptr());
    scalar_t* pm = static_cast<scalar_t*>(mean.data_ptr());
    scalar_t* pr = static_cast<scalar_t*>(rstd.data_ptr());
    cpu::parallel_for(0, N * group, row_grain(row), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const scalar_t* xr = x + r * row;
        scalar_t* yr = y + r * row;
        A mu = 0, rs = 0;
        if (row > 0) {
          mu = row_sum<scalar_t, A>(xr, row) / static_cast<A>(row);
          const A var = row_sq_dev<scalar_t, A>(xr, row, mu) / static_cast<A>(row);
          rs = A(1) / std::sqrt(std::max(var, A(0)) + static_cast<A>(eps));
        } else {
          mu = std::numeric_limits<A>::quiet_NaN();
          rs = std::numeric_limits<A>::quiet_NaN();
        }
        const int64_t g0 = (r % group) * D;
        for (int64_t d = 0; d < D; ++d) {
          const A sc = rs * (g.empty() ? A(1) : g[g0 + d]);
          const A sh = -mu * sc + (b.empty() ? A(0) : b[g0 + d]);
          const scalar_t* xc = xr + d * HxW;
          scalar_t* yc = yr + d * HxW;
          for (int64_t k = 0; k < HxW; ++k)
            yc[k] = static_cast<scalar_t>(static_cast<A>(xc[k]) * sc + sh);
        }
        pm[r] = static_cast<scalar_t>(mu);
        pr[r] = static_cast<scalar_t>(rs);
      }
    });
  });
  return {in_format_of(Y, input), mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(
    const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
    std::array<bool, 3> output_mask) {
  common::check_group_norm(input, weight, std::nullopt, N, C, HxW, group);
  const Tensor X = input.contiguous(), dY = grad_out.contiguous();
  const Tensor mean_c = mean.contiguous(), rstd_c = rstd.contiguous();
  const int64_t D = C / group;
  Tensor dX, dgamma, dbeta;
  if (output_mask[0]) dX = cpu::empty_cpu(input.sizes(), input.scalar_type());
  if (output_mask[1]) dgamma = cpu::empty_cpu({C}, input.scalar_type());
  if (output_mask[2]) dbeta = cpu::empty_cpu({C}, input.scalar_type());
  OPD_DISPATCH_FLOATING_TYPES_AND(
      kBFloat16, input.scalar_type(), "GroupNormBackwardKernelImpl", [&] {
        using A = opmath_t<scalar_t>;
        const std::vector<A> g = load<A>(weight);
        const scalar_t* x = static_cast<const scalar_t*>(X.data_ptr());
        const scalar_t* dy = static_cast<const scalar_t*>(dY.data_ptr());
        const scalar_t* pm = static_cast<const scalar_t*>(mean_c.data_ptr());
        const scalar_t* pr = static_cast<const scalar_t*>(rstd_c.data_ptr());
        // ds[n, c] = sum dy * x, db[n, c] = sum dy over the HxW elements of channel c of sample n.
        std::vector<A> ds(static_cast<size_t>(N * C)), db(static_cast<size_t>(N * C));
        cpu::parallel_for(0, N * C, row_grain(HxW), [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r)
            row_dot<scalar_t, A>(dy + r * HxW, x + r * HxW, nullptr, HxW, db[r], ds[r]);
        });
        if (dX.defined()) {
          scalar_t* dx = static_cast<scalar_t*>(dX.data_ptr());
          const A s = A(1) / static_cast<A>(D * HxW);
          cpu::parallel_for(0, N * group, row_grain(D * HxW), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const int64_t n = r / group, g0 = (r % group) * D;
              A ds_g = 0, db_g = 0;
              for (int64_t d = 0; d < D; ++d) {
                const A gc = g.empty() ? A(1) : g[g0 + d];
                ds_g += ds[n * C + g0 + d] * gc;
                db_g += db[n * C + g0 + d] * gc;
              }
              const A mu = static_cast<A>(pm[r]), rs = static_cast<A>(pr[r]);
              const A c2 = (db_g * mu - ds_g) * rs * rs * rs * s;
              const A c3 = -c2 * mu - db_g * rs * s;
              for (int64_t d = 0; d < D; ++d) {
                const A c1 = rs * (g.empty() ? A(1) : g[g0 + d]);
                const int64_t off = (n * C + g0 + d) * HxW;
                for (int64_t k = 0; k < HxW; ++k)
                  dx[off + k] = static_cast<scalar_t>(c1 * static_cast<A>(dy[off + k]) +
                                                      c2 * static_cast<A>(x[off + k]) + c3);
              }
            }
          });
        }
        for (int64_t c = 0; c < C && (dgamma.defined() || dbeta.defined()); ++c) {
          A sg = 0, sb = 0;
          for (int64_t n = 0; n < N; ++n) {
            const int64_t r = n * group + c / D;
            sg += (ds[n * C + c] - db[n * C + c] * static_cast<A>(pm[r])) * static_cast<A>(pr[r]);
            sb += db[n * C + c];
          }
          if (dgamma.defined())
            static_cast<scalar_t*>(dgamma.data_ptr())[c] = static_cast<scalar_t>(sg);
          if (dbeta.defined())
            static_cast<scalar_t*>(dbeta.data_ptr())[c] = static_cast<scalar_t>(sb);
        }
      });
  if (dX.defined()) dX = in_format_of(dX, input);
  return {dX, dgamma, dbeta};
}

// ---- batch_norm ---------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var,
                                                     bool training, double momentum, double eps) {
  const int64_t C =
      common::check_batch_norm(input, weight, bias, running_mean, running_var, training);
  const int64_t N = input.size(0), HxW = C == 0 ? 0 : input.numel() / std::max<int64_t>(N * C, 1);
  const int64_t count = N * HxW;
  const Tensor X = input.contiguous();
  Tensor Y = cpu::empty_cpu(input.sizes(), input.scalar_type());
  Tensor save_mean = cpu::empty_cpu({training ? C : 0}, input.scalar_type());
  Tensor save_invstd = cpu::empty_cpu({training ? C : 0}, input.scalar_type());
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, input.scalar_type(), "batch_norm", [&] {
    using A = opmath_t<scalar_t>;
    const std::vector<A> g = load<A>(weight), b = load<A>(bias);
    std::vector<A> mu(static_cast<size_t>(C)), var(static_cast<size_t>(C)),
        inv(static_cast<size_t>(C));
    const scalar_t* x = static_cast<const scalar_t*>(X.data_ptr());
    scalar_t* y = static_cast<scalar_t*>(Y.data_ptr());
    if (training) {
      cpu::parallel_for(0, C, std::max<int64_t>(1, kGrain / std::max<int64_t>(count, 1)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t c = begin; c < end; ++c) {
                            A s = 0;
                            for (int64_t n = 0; n < N; ++n)
                              s += row_sum<scalar_t, A>(x + (n * C + c) * HxW, HxW);
                            const A m = count > 0 ? s / static_cast<A>(count) : A(0);
                            A q = 0;
                            for (int64_t n = 0; n < N; ++n)
                              q += row_sq_dev<scalar_t, A>(x + (n * C + c) * HxW, HxW, m);
                            mu[c] = m;
                            var[c] = count > 0 ? q / static_cast<A>(count) : A(0);
                            inv[c] = A(1) / std::sqrt(var[c] + static_cast<A>(eps));
                          }
                        });
      for (int64_t c = 0; c < C; ++c) {
        static_cast<scalar_t*>(save_mean.data_ptr())[c] = static_cast<scalar_t>(mu[c]);
        static_cast<scalar_t*>(save_invstd.data_ptr())[c] = static_cast<scalar_t>(inv[c]);
        // Running statistics: momentum and the unbiased variance, in place (PyTorch's).
        if (has(running_mean)) {
          write_at(
              *running_mean, c,
              momentum * static_cast<double>(mu[c]) + (1 - momentum) * read_at(*running_mean, c));
        }
        if (has(running_var)) {
          const double unbiased = count > 1 ? static_cast<double>(var[c]) * count / (count - 1)
                                            : std::numeric_limits<double>::infinity();
          write_at(*running_var, c,
                   momentum * unbiased + (1 - momentum) * read_at(*running_var, c));
        }
      }
    } else {
      for (int64_t c = 0; c < C; ++c) {
        mu[c] = static_cast<A>(read_at(*running_mean, c));
        inv[c] = static_cast<A>(1 / std::sqrt(read_at(*running_var, c) + eps));
      }
    }
    cpu::parallel_for(0, N * C, row_grain(HxW), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t c = r % C;
        const A sc = inv[c] * (g.empty() ? A(1) : g[c]);
        const A sh = (b.empty() ? A(0) : b[c]) - mu[c] * sc;
        const scalar_t* xr = x + r * HxW;
        scalar_t* yr = y + r * HxW;
        for (int64_t k = 0; k < HxW; ++k)
          yr[k] = static_cast<scalar_t>(static_cast<A>(xr[k]) * sc + sh);
      }
    });
  });
  return {in_format_of(Y, input), save_mean, save_invstd};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train,
    double eps, std::array<bool, 3> output_mask) {
  const int64_t C =
      common::check_batch_norm(input, weight, std::nullopt, running_mean, running_var, train);
  OPD_CHECK(!train || (has(save_mean) && has(save_invstd)),
            "save_mean and save_invstd must be defined in training mode");
  const int64_t N = input.size(0), HxW = C == 0 ? 0 : input.numel() / std::max<int64_t>(N * C, 1);
  const int64_t count = N * HxW;
  const Tensor X = input.contiguous(), dY = grad_out.contiguous();
  Tensor dX, dW, dB;
  const ScalarType wt = has(weight) ? weight->scalar_type() : input.scalar_type();
  if (output_mask[0]) dX = cpu::empty_cpu(input.sizes(), input.scalar_type());
  if (output_mask[1]) dW = cpu::empty_cpu({C}, wt);
  if (output_mask[2]) dB = cpu::empty_cpu({C}, wt);
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, input.scalar_type(), "batch_norm_backward_cpu", [&] {
    using A = opmath_t<scalar_t>;
    const std::vector<A> g = load<A>(weight);
    const scalar_t* x = static_cast<const scalar_t*>(X.data_ptr());
    const scalar_t* dy = static_cast<const scalar_t*>(dY.data_ptr());
    std::vector<A> mu(static_cast<size_t>(C)), inv(static_cast<size_t>(C));
    std::vector<A> sum_dy(static_cast<size_t>(C)), dotp(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      if (train) {
        mu[c] = static_cast<A>(read_at(*save_mean, c));
        inv[c] = static_cast<A>(read_at(*save_invstd, c));
      } else {
        mu[c] = static_cast<A>(read_at(*running_mean, c));
        inv[c] = static_cast<A>(1 / std::sqrt(read_at(*running_var, c) + eps));
      }
    }
    cpu::parallel_for(0, C, std::max<int64_t>(1, kGrain / std::max<int64_t>(count, 1)),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t c = begin; c < end; ++c) {
                          A sd = 0, sdx = 0;
                          for (int64_t n = 0; n < N; ++n) {
                            A a = 0, b = 0;
                            row_dot<scalar_t, A>(dy + (n * C + c) * HxW, x + (n * C + c) * HxW,
                                                 nullptr, HxW, a, b);
                            sd += a;
                            sdx += b;
                          }
                          sum_dy[c] = sd;
                          dotp[c] = sdx - mu[c] * sd;  // sum (x - mean) * dy
                        }
                      });
    if (dX.defined()) {
      scalar_t* dx = static_cast<scalar_t*>(dX.data_ptr());
      cpu::parallel_for(0, N * C, row_grain(HxW), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t c = r % C;
          const A w = g.empty() ? A(1) : g[c];
          const scalar_t* xr = x + r * HxW;
          const scalar_t* dyr = dy + r * HxW;
          scalar_t* dxr = dx + r * HxW;
          if (train) {
            const A k = dotp[c] * inv[c] * inv[c] / static_cast<A>(count);
            const A gm = sum_dy[c] / static_cast<A>(count);
            const A s = inv[c] * w;
            for (int64_t j = 0; j < HxW; ++j) {
              const A proj = (static_cast<A>(xr[j]) - mu[c]) * k;
              dxr[j] = static_cast<scalar_t>((static_cast<A>(dyr[j]) - proj - gm) * s);
            }
          } else {
            const A s = inv[c] * w;
            for (int64_t j = 0; j < HxW; ++j)
              dxr[j] = static_cast<scalar_t>(static_cast<A>(dyr[j]) * s);
          }
        }
      });
    }
    for (int64_t c = 0; c < C; ++c) {
      if (dW.defined()) write_at(dW, c, static_cast<double>(dotp[c] * inv[c]));
      if (dB.defined()) write_at(dB, c, static_cast<double>(sum_dy[c]));
    }
  });
  if (dX.defined()) dX = in_format_of(dX, input);
  return {dX, dW, dB};
}

}  // namespace opd::native
