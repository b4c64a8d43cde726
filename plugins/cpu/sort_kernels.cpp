// CPU kernels of sort.stable and topk. Each line along `dim` is copied out as (value, index)
// pairs, ordered, and written to the contiguous values and indices. NaN is larger than every
// number (last ascending, first descending), as PyTorch's comparators order it, and -0.0 equals
// 0.0.
//
// Note [Sort and topk ties]
// sort is always stable (equal values keep their order, descending too), which is what PyTorch
// 1.13's CPU sort gives whether or not `stable` is asked for. topk picks as PyTorch 1.13's CPU
// kernel does, comparing values only: std::partial_sort of the line's (value, position) entries
// when k * 64 <= n, else std::nth_element at k - 1 and, when `sorted`, std::sort of the first
// k - 1 (the k-th stays where nth_element put it). The standard library's algorithms are
// deterministic, so with the same library as torch's (GCC 12's libstdc++ on Debian 12) tied
// values come out at torch's positions, which no rule of ours (by position, say) reproduces.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/sort_shape.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/parallel.h"
#include "cpu/sort_key.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using cpu::is_nan;
using cpu::key_of;

// a before b, ascending (NaN last) or descending (NaN first).
template <class K>
bool before(K a, K b, bool descending) {
  if (descending) return is_nan(a) ? !is_nan(b) : a > b;
  return is_nan(b) ? !is_nan(a) : a < b;
}

template <class K>
struct Entry {
  K key;
  int64_t index;
};

// The geometry of a line along `dim` of a tensor: element (o, j, i) of [outer, n, inner].
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
};
Lines lines_of(const Tensor& t, int64_t dim) {
  Lines l;
  if (t.dim() == 0) return l;
  l.n = t.size(dim);
  for (int64_t d = 0; d < dim; ++d) l.outer *= t.size(d);
  for (int64_t d = dim + 1; d < t.dim(); ++d) l.inner *= t.size(d);
  return l;
}

// Runs fn(entries, o, i) on every line of the contiguous `src` (T elements), its entries filled
// with (key, position), lines in parallel.
template <class T, class F>
void for_each_sorted_line(const T* src, const Lines& l, F&& fn) {
  using K = decltype(key_of(T{}));
  const int64_t lines = l.outer * l.inner;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, l.n));
  cpu::parallel_for(0, lines, grain, [&](int64_t b, int64_t e) {
    std::vector<Entry<K>> entries(static_cast<size_t>(l.n));
    for (int64_t line = b; line < e; ++line) {
      const int64_t o = line / l.inner, i = line % l.inner;
      const T* p = src + o * l.n * l.inner + i;
      for (int64_t j = 0; j < l.n; ++j) entries[j] = {key_of(p[j * l.inner]), j};
      fn(entries, o, i);
    }
  });
}

Tensor contiguous_input(const Tensor& self) {
  return self.is_contiguous() ? self : self.contiguous();
}

// Note [Radix sort]
// Lines of float32 and int32 sort by an LSD radix sort (four passes of 8 bits, stable) on
// unsigned keys ordered as sort's comparison orders the values: a float's sign bit flipped, or
// all its bits when negative; -0.0 as 0.0; every NaN as the largest key; an int32's sign bit
// flipped; all bits inverted for descending. The result is the stable sort's, element for
// element, at a fraction of a comparison sort's time on long lines.
template <class T>
uint32_t radix_key(T v, bool descending) {
  uint32_t k;
  if constexpr (std::is_same_v<T, float>) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (std::isnan(v)) {
      k = 0xFFFFFFFFu;
    } else {
      if (bits == 0x80000000u) bits = 0;  // -0.0 sorts as 0.0
      k = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
    }
  } else {
    k = static_cast<uint32_t>(v) ^ 0x80000000u;
  }
  return descending ? ~k : k;
}

constexpr int64_t kRadixMinLine = 64;  // shorter lines: the comparison sort

// Sorts the positions 0..n-1 of `p` (element stride `stride`) into `order`; `keys`, `tmp_keys`
// and `tmp_order` are scratch of n entries.
template <class T>
void radix_sort_line(const T* p, int64_t stride, int64_t n, bool descending, uint32_t* keys,
                     uint32_t* tmp_keys, int64_t* order, int64_t* tmp_order) {
  for (int64_t j = 0; j < n; ++j) {
    keys[j] = radix_key(p[j * stride], descending);
    order[j] = j;
  }
  for (int shift = 0; shift < 32; shift += 8) {
    int64_t count[257] = {};
    for (int64_t j = 0; j < n; ++j) ++count[((keys[j] >> shift) & 0xFF) + 1];
    if (count[((keys[0] >> shift) & 0xFF) + 1] == n) continue;  // one digit: nothing moves
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (int64_t j = 0; j < n; ++j) {
      const int64_t at = count[(keys[j] >> shift) & 0xFF]++;
      tmp_keys[at] = keys[j];
      tmp_order[at] = order[j];
    }
    std::swap_ranges(tmp_keys, tmp_keys + n, keys);
    std::swap_ranges(tmp_order, tmp_order + n, order);
  }
}

template <class T>
void radix_sort(const T* s, T* v, int64_t* x, const Lines& l, bool descending) {
  const int64_t lines = l.outer * l.inner;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, l.n));
  cpu::parallel_for(0, lines, grain, [&](int64_t b, int64_t e) {
    std::vector<uint32_t> keys(l.n), tmp_keys(l.n);
    std::vector<int64_t> order(l.n), tmp_order(l.n);
    for (int64_t line = b; line < e; ++line) {
      const int64_t o = line / l.inner, i = line % l.inner;
      const int64_t base = o * l.n * l.inner + i;
      radix_sort_line(s + base, l.inner, l.n, descending, keys.data(), tmp_keys.data(),
                      order.data(), tmp_order.data());
      for (int64_t j = 0; j < l.n; ++j) {
        v[base + j * l.inner] = s[base + order[j] * l.inner];
        x[base + j * l.inner] = order[j];
      }
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor> sort_stable(const Tensor& self, std::optional<bool> /*stable*/,
                                       int64_t dim, bool descending) {
  common::sort_check(self);
  dim = maybe_wrap_dim(dim, self.dim());
  Tensor values = cpu::empty_cpu(self.sizes(), self.scalar_type());
  Tensor indices = cpu::empty_cpu(self.sizes(), kLong);
  if (self.numel() == 0) return {values, indices};
  const Tensor src = contiguous_input(self);
  const Lines l = lines_of(self, dim);
  common::visit_dtype<false>(self.scalar_type(), "sort", [&](auto t) {
    using T = decltype(t);
    using K = decltype(key_of(T{}));
    const T* s = static_cast<const T*>(src.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* x = indices.data_ptr<int64_t>();
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t>) {
      if (l.n >= kRadixMinLine) return radix_sort(s, v, x, l, descending);  // Note [Radix sort]
    }
    for_each_sorted_line<T>(s, l, [&](std::vector<Entry<K>>& e, int64_t o, int64_t i) {
      std::stable_sort(e.begin(), e.end(), [descending](const Entry<K>& a, const Entry<K>& b) {
        return before(a.key, b.key, descending);
      });
      const int64_t base = o * l.n * l.inner + i;
      const T* line = s + base;
      for (int64_t j = 0; j < l.n; ++j) {
        v[base + j * l.inner] = line[e[j].index * l.inner];
        x[base + j * l.inner] = e[j].index;
      }
    });
  });
  return {values, indices};
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  const std::vector<int64_t> sizes = common::topk_sizes(self, k, dim);
  dim = maybe_wrap_dim(dim, self.dim());
  Tensor values = cpu::empty_cpu(sizes, self.scalar_type());
  Tensor indices = cpu::empty_cpu(sizes, kLong);
  if (values.numel() == 0) return {values, indices};
  if (self.dim() == 0) {
    // A 0-d self has its one element whatever k (0 or 1), as PyTorch 1.13's CPU topk returns;
    // the line loops below would index an empty selection for k == 0.
    std::memcpy(values.data_ptr(), self.data_ptr(), self.element_size());
    *indices.data_ptr<int64_t>() = 0;
    return {values, indices};
  }
  const Tensor src = contiguous_input(self);
  const Lines l = lines_of(self, dim);
  common::visit_dtype<false>(self.scalar_type(), "topk_cpu", [&](auto t) {
    using T = decltype(t);
    using K = decltype(key_of(T{}));
    const T* s = static_cast<const T*>(src.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* x = indices.data_ptr<int64_t>();
    // See Note [Sort and topk ties]: PyTorch 1.13's choice of algorithm, comparing values only.
    auto first = [largest](const Entry<K>& a, const Entry<K>& b) {
      return before(a.key, b.key, largest);
    };
    for_each_sorted_line<T>(s, l, [&](std::vector<Entry<K>>& e, int64_t o, int64_t i) {
      if (k * 64 <= l.n) {
        std::partial_sort(e.begin(), e.begin() + k, e.end(), first);
      } else {
        std::nth_element(e.begin(), e.begin() + (k - 1), e.end(), first);
        if (sorted) std::sort(e.begin(), e.begin() + (k - 1), first);
      }
      const int64_t in_base = o * l.n * l.inner + i;
      const int64_t out_base = o * k * l.inner + i;
      for (int64_t j = 0; j < k; ++j) {
        v[out_base + j * l.inner] = s[in_base + e[j].index * l.inner];
        x[out_base + j * l.inner] = e[j].index;
      }
    });
  });
  return {values, indices};
}

}  // namespace opd::native
