// CPU kernels of advanced indexing: index.Tensor (a gather), index_put_ (a scatter, adding when
// `accumulate`) and nonzero. The plan (which dimensions are indexed, the result's shape, the
// errors) is common/index_shape.h's, shared with Meta; see Note [Advanced indexing] there.
//
// Both gathers and scatters see the result as rows [P, B, Q]: P the positions of the whole
// dimensions ahead of the indexed ones, B those of the broadcast index tensors, Q those of the
// whole dimensions after them. Each group's element offsets into self are computed once, so an
// element's address is a sum of three table entries; a Q group that is one contiguous run of
// self is copied with memcpy.

#include <complex>
#include <cstring>
#include <optional>
#include <type_traits>

#include "common/index_shape.h"
#include "common/output.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/element_words.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"
#include "opd/warning.h"

namespace opd::native {

namespace {

// Elements touched per parallel chunk.
constexpr int64_t kGrain = 1 << 15;

// Offsets into self of the positions of whole dimensions `dims`, row-major.
std::vector<int64_t> dims_offsets(const Tensor& self, const std::vector<int64_t>& dims) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d : dims) {
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  std::vector<int64_t> out(common::product_of(sizes));
  common::walk_strided(sizes, strides, 0, static_cast<int64_t>(out.size()),
                       [&](int64_t l, int64_t off) { out[l] = off; });
  return out;
}

// Offsets into self of each position of B: the sum over the index tensors of index * stride,
// with negative indices counted from the end and every index checked against its dimension.
std::vector<int64_t> index_offsets(const Tensor& self, const common::IndexPlan& plan) {
  std::vector<int64_t> out(common::product_of(plan.index_shape), 0);
  const int64_t n = static_cast<int64_t>(out.size());
  for (size_t k = 0; k < plan.indices.size(); ++k) {
    const Tensor& t = plan.indices[k];
    const int64_t dim = plan.indexed_dims[k];
    const int64_t size = self.size(dim), stride = self.stride(dim);
    const auto* data = static_cast<const int64_t*>(t.data_ptr());
    cpu::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      common::walk_strided(t.sizes(), t.strides(), begin, end, [&](int64_t l, int64_t off) {
        int64_t i = data[off];
        // PyTorch names the index tensor's place among the defined ones, not self's dimension.
        if (i < -size || i >= size) common::check_index_bound(i, static_cast<int64_t>(k), size);
        if (i < 0) i += size;
        out[l] += i * stride;
      });
    });
  }
  return out;
}

// The three offset tables of a plan.
struct Rows {
  std::vector<int64_t> before, index, after;
  bool after_is_run = true;  // after[q] == q: one contiguous run of self
};

Rows rows_of(const Tensor& self, const common::IndexPlan& plan) {
  Rows r{dims_offsets(self, plan.before_dims), index_offsets(self, plan),
         dims_offsets(self, plan.after_dims)};
  for (size_t q = 0; q < r.after.size() && r.after_is_run; ++q) {
    r.after_is_run = r.after[q] == static_cast<int64_t>(q);
  }
  return r;
}

using cpu::visit_word;

template <class T>
void accumulate_into(T& dst, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    dst = dst || v;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    dst = T(static_cast<float>(dst) + static_cast<float>(v));
  } else {
    dst = static_cast<T>(dst + v);
  }
}

// The common case x[idx] (and x[idx] = v): one index tensor, no whole dimension ahead of it,
// and the dimensions after it one contiguous run of self. Rows are then read straight from the
// index values, without the offset tables; nullopt when the plan is not of that kind.
struct SingleIndex {
  const int64_t* data;   // the index values, contiguous
  int64_t size, stride;  // of the indexed dimension of self
  int64_t dim;           // the index tensor's place, for errors (always 0)
  int64_t row;           // elements per row: the product of the dimensions after it
};

std::optional<SingleIndex> single_index(const Tensor& self, const common::IndexPlan& plan) {
  if (plan.indices.size() != 1 || !plan.before_dims.empty()) return std::nullopt;
  const Tensor& t = plan.indices[0];
  if (!t.is_contiguous()) return std::nullopt;
  int64_t expected = 1, row = 1;
  for (auto d = plan.after_dims.rbegin(); d != plan.after_dims.rend(); ++d) {
    if (self.size(*d) != 1 && self.stride(*d) != expected) return std::nullopt;
    expected *= self.size(*d);
    row *= self.size(*d);
  }
  const int64_t dim = plan.indexed_dims[0];
  return SingleIndex{static_cast<const int64_t*>(t.data_ptr()), self.size(dim), self.stride(dim), 0,
                     row};
}

// Row l's element offset in self, the index checked and wrapped.
inline int64_t row_offset(const SingleIndex& s, int64_t l) {
  int64_t i = s.data[l];
  if (i < -s.size || i >= s.size) common::check_index_bound(i, s.dim, s.size);
  return (i < 0 ? i + s.size : i) * s.stride;
}

}  // namespace

Tensor index_Tensor(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  const common::IndexPlan plan = common::plan_index(self, indices);
  Tensor out = cpu::empty_cpu(plan.result_shape, self.scalar_type());
  const size_t elem = element_size(self.scalar_type());
  if (const auto s = single_index(self, plan)) {
    const int64_t rows = common::product_of(plan.index_shape);
    visit_word(elem, [&](auto w) {
      using W = decltype(w);
      const W* src = static_cast<const W*>(self.data_ptr());
      W* dst = static_cast<W*>(out.data_ptr());
      const int64_t q = s->row;
      cpu::parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(q, 1)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t l = begin; l < end; ++l) {
                            const W* from = src + row_offset(*s, l);
                            if (q == 1) {
                              dst[l] = *from;
                            } else if (q > 1) {  // none when self has a 0-size dimension
                              std::memcpy(dst + l * q, from, q * sizeof(W));
                            }
                          }
                        });
    });
    return out;
  }
  const Rows r = rows_of(self, plan);
  const int64_t nb = static_cast<int64_t>(r.index.size());
  const int64_t q = static_cast<int64_t>(r.after.size());
  const int64_t rows = static_cast<int64_t>(r.before.size()) * nb;
  if (out.numel() == 0) return out;
  visit_word(elem, [&](auto w) {
    using W = decltype(w);
    const W* src = static_cast<const W*>(self.data_ptr());
    W* dst = static_cast<W*>(out.data_ptr());
    cpu::parallel_for(0, rows, std::max<int64_t>(1, kGrain / q), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const W* base = src + r.before[row / nb] + r.index[row % nb];
        W* d = dst + row * q;
        if (r.after_is_run) {
          std::memcpy(d, base, q * sizeof(W));
        } else {
          for (int64_t k = 0; k < q; ++k) d[k] = base[r.after[k]];
        }
      }
    });
  });
  return out;
}

Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                   const Tensor& values, bool accumulate) {
  const common::IndexPlan plan = common::plan_index(self, indices);
  common::check_index_put_values(self, plan, values);
  if (common::has_internal_overlap(self)) {
    // PyTorch 1.13 warns and writes (its Meta lets it through too).
    warn(
        "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
        "performing this operation. This also applies to advanced indexing e.g. "
        "tensor[indices] = tensor");
  }
  const Tensor v = values.expand(plan.result_shape);
  const auto s = single_index(self, plan);
  // A value of one element (x[mask] = 0) is read in place, as is a contiguous one of the
  // result's shape.
  const bool one_value = values.numel() == 1;
  if (s && (one_value || v.is_contiguous())) {
    const int64_t step = one_value ? 0 : 1;
    const int64_t rows = common::product_of(plan.index_shape);
    const int64_t q = s->row;
    common::visit_dtype(self.scalar_type(), "index_put_", [&](auto tag) {
      using T = decltype(tag);
      T* dst = static_cast<T*>(self.data_ptr());
      const T* src = static_cast<const T*>(v.data_ptr());
      auto put = [&](int64_t begin, int64_t end) {
        if (!accumulate && q == 1) {  // x[idx] = v: one element per index
          for (int64_t l = begin; l < end; ++l) dst[row_offset(*s, l)] = src[l * step];
          return;
        }
        for (int64_t l = begin; l < end; ++l) {
          T* to = dst + row_offset(*s, l);
          const T* from = src + l * q * step;
          for (int64_t k = 0; k < q; ++k) {
            if (accumulate) {
              accumulate_into(to[k], from[k * step]);
            } else {
              to[k] = from[k * step];
            }
          }
        }
      };
      if (accumulate) {
        put(0, rows);
      } else {
        cpu::parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(q, 1)), put);
      }
    });
    return self;
  }
  const Rows r = rows_of(self, plan);
  const int64_t nb = static_cast<int64_t>(r.index.size());
  const int64_t q = static_cast<int64_t>(r.after.size());
  const int64_t total = static_cast<int64_t>(r.before.size()) * nb * q;
  if (total == 0) return self;
  common::visit_dtype(self.scalar_type(), "index_put_", [&](auto tag) {
    using T = decltype(tag);
    T* dst = static_cast<T*>(self.data_ptr());
    const T* src = static_cast<const T*>(v.data_ptr());
    // Elements [begin, end) of the result, row-major over [P, B, Q].
    auto put = [&](int64_t begin, int64_t end) {
      int64_t k = begin % q, b = (begin / q) % nb, p = begin / (q * nb);
      common::walk_strided(v.sizes(), v.strides(), begin, end, [&](int64_t, int64_t voff) {
        T& d = dst[r.before[p] + r.index[b] + r.after[k]];
        if (accumulate) {
          accumulate_into(d, src[voff]);
        } else {
          d = src[voff];
        }
        if (++k == q) {
          k = 0;
          if (++b == nb) b = 0, ++p;
        }
      });
    };
    // Repeated indices add up: accumulation runs on one thread.
    if (accumulate) {
      put(0, total);
    } else {
      cpu::parallel_for(0, total, kGrain, put);
    }
  });
  return self;
}

Tensor nonzero(const Tensor& self) {
  const int64_t n = self.numel();
  const int64_t nd = self.dim();
  Tensor out;
  common::visit_dtype(self.scalar_type(), "nonzero_cpu", [&](auto tag) {
    using T = decltype(tag);
    const T* data = static_cast<const T*>(self.data_ptr());
    auto is_nonzero = [](const T& x) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        return static_cast<float>(x) != 0.0f;
      } else {
        return x != T(0);
      }
    };
    int64_t count = 0;
    int64_t* o = nullptr;
    if (self.is_contiguous()) {
      // One pass to count, one to write each hit's coordinates (unravelled only for hits).
      for (int64_t l = 0; l < n; ++l) count += is_nonzero(data[l]) ? 1 : 0;
      out = cpu::empty_cpu({count, nd}, ScalarType::Int64);
      o = static_cast<int64_t*>(out.data_ptr());
      for (int64_t l = 0; l < n; ++l) {
        if (!is_nonzero(data[l])) continue;
        for (int64_t d = nd - 1, rest = l; d >= 0; --d) {
          o[d] = rest % self.size(d);
          rest /= self.size(d);
        }
        o += nd;
      }
      return;
    }
    common::walk_strided(self.sizes(), self.strides(), 0, n,
                         [&](int64_t, int64_t off) { count += is_nonzero(data[off]) ? 1 : 0; });
    out = cpu::empty_cpu({count, nd}, ScalarType::Int64);
    o = static_cast<int64_t*>(out.data_ptr());
    std::vector<int64_t> at(nd, 0);
    common::walk_strided(self.sizes(), self.strides(), 0, n, [&](int64_t, int64_t off) {
      if (is_nonzero(data[off])) {
        for (int64_t d = 0; d < nd; ++d) *o++ = at[d];
      }
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (++at[d] < self.size(d)) break;
        at[d] = 0;
      }
    });
  });
  return out;
}

}  // namespace opd::native
