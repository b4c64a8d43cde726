// CPU kernels of index_select (and its out=) and index_fill_, and the impl of the structured
// index_add.out:
// whole slices of self along `dim`, moved or added by index. Index values are checked as they
// are read: IndexError "index out of range in self", PyTorch's text.

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/output.h"
#include "common/scatter_gather_shape.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/element_words.h"
#include "cpu/index_lines.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

void check_index(int64_t k, int64_t size) {
  OPD_CHECK_T(IndexError, k >= 0 && k < size, "index out of range in self");
}

// The index's values as int64 (it is int32 or int64, 0- or 1-dim).
std::vector<int64_t> index_values(const Tensor& index) {
  std::vector<int64_t> v(static_cast<size_t>(index.numel()));
  const int64_t stride = index.dim() == 0 ? 0 : index.stride(0);
  if (index.scalar_type() == kLong) {
    const int64_t* p = index.data_ptr<int64_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i * stride];
  } else {
    const int32_t* p = index.data_ptr<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i * stride];
  }
  return v;
}

using cpu::visit_word;

// result (contiguous, index_select's sizes) = the slices of self along dim that index names.
void index_select_into(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& result) {
  const std::vector<int64_t> idx = index_values(index);
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t k : idx) check_index(k, size);
  if (result.numel() == 0) return;
  const Tensor src = self.is_contiguous() ? self : self.contiguous();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  const int64_t m = static_cast<int64_t>(idx.size());
  const size_t bytes = static_cast<size_t>(inner) * src.element_size();
  const char* s = static_cast<const char*>(src.data_ptr());
  char* r = static_cast<char*>(result.data_ptr());
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<size_t>(1, bytes));
  if (inner == 1 && bytes <= 8) {  // one element per index: copied as a word of its size
    visit_word(bytes, [&](auto word) {
      using W = decltype(word);
      const W* sw = reinterpret_cast<const W*>(s);
      W* rw = reinterpret_cast<W*>(r);
      const int64_t* ip = idx.data();
      cpu::parallel_for(0, outer, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, m)),
                        [=](int64_t b, int64_t e) {
                          for (int64_t o = b; o < e; ++o) {
                            const W* row = sw + o * size;
                            W* dst = rw + o * m;
                            int64_t i = 0;
                            for (; i + 4 <= m; i += 4) {  // four loads in flight
                              const W x0 = row[ip[i]], x1 = row[ip[i + 1]];
                              const W x2 = row[ip[i + 2]], x3 = row[ip[i + 3]];
                              dst[i] = x0;
                              dst[i + 1] = x1;
                              dst[i + 2] = x2;
                              dst[i + 3] = x3;
                            }
                            for (; i < m; ++i) dst[i] = row[ip[i]];
                          }
                        });
    });
    return;
  }
  cpu::parallel_for(0, outer * m, grain, [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / m, i = w % m;
      std::memcpy(r + w * bytes, s + (o * size + idx[i]) * bytes, bytes);
    }
  });
}

template <class T>
T add_scaled(T a, T b, T alpha) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || (b && alpha);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(a) + float(b) * float(alpha));
  } else {
    return static_cast<T>(a + b * alpha);
  }
}

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  const std::vector<int64_t> sizes = common::index_select_sizes(self, dim, index);
  Tensor result = cpu::empty_cpu(sizes, self.scalar_type());
  index_select_into(self, maybe_wrap_dim(dim, self.dim()), index, result);
  return result;
}

Tensor& index_select_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  const std::vector<int64_t> sizes = common::index_select_sizes(self, dim, index);
  OPD_CHECK(self.scalar_type() == out.scalar_type(),
            "index_select(): self and result must have the same scalar type");
  common::check_no_internal_overlap(out);  // before the resize, as PyTorch's index_select_out
  common::resize_output("index_select", out, sizes);
  if (out.is_contiguous()) {
    index_select_into(self, maybe_wrap_dim(dim, self.dim()), index, out);
    out.bump_version();
  } else {
    Tensor result = cpu::empty_cpu(sizes, self.scalar_type());
    index_select_into(self, maybe_wrap_dim(dim, self.dim()), index, result);
    out.copy_(result);
  }
  return out;
}

Tensor& index_fill__int_Scalar(Tensor& self, int64_t dim, const Tensor& index,
                               const Scalar& value) {
  common::index_fill_check(index);
  dim = maybe_wrap_dim(dim, self.dim());
  common::warn_on_expanded_fill("index_fill_", self);
  std::vector<int64_t> idx = index_values(index);
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t& k : idx) {  // negative indices count from the end, as PyTorch's index_fill_
    OPD_CHECK_T(IndexError, k >= -size && k < size,
                "index {} is out of bounds for dimension {} with size {}", k, dim, size);
    if (k < 0) k += size;
  }
  if (!idx.empty() && self.numel() > 0) {
    const int64_t stride = self.dim() == 0 ? 0 : self.stride(dim);
    common::visit_dtype(self.scalar_type(), "index_fill_", [&](auto t) {
      using T = decltype(t);
      const T v = common::scalar_to<T>(value);
      T* s = static_cast<T*>(self.data_ptr());
      // The lines along dim, each filled at the indexed positions.
      cpu::for_each_line<1>(self.sizes(), dim, {self.strides()}, true,
                            [&](const std::array<int64_t, 1>& off) {
                              for (int64_t k : idx) s[off[0] + k * stride] = v;
                            });
    });
  }
  self.bump_version();
  return self;
}

void index_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha, const Tensor& out) {
  if (!out.is_same(self)) out.copy_(self);
  dim = maybe_wrap_dim(dim, self.dim());
  const std::vector<int64_t> idx = index_values(index);
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t k : idx) check_index(k, size);
  if (idx.empty() || out.numel() == 0) return;
  // source, broadcast to self's slices: [.., index.numel() along dim, ..].
  std::vector<int64_t> sizes(out.sizes().begin(), out.sizes().end());
  Tensor src = source;
  if (out.dim() > 0) {
    sizes[dim] = static_cast<int64_t>(idx.size());
    if (source.dim() == 0) src = source.reshape(std::vector<int64_t>(out.dim(), 1));
    src = src.expand(sizes);
  }
  const int64_t n = static_cast<int64_t>(idx.size());
  const int64_t ss = src.dim() == 0 ? 0 : src.stride(dim);
  const int64_t os = out.dim() == 0 ? 0 : out.stride(dim);
  common::visit_dtype(out.scalar_type(), "index_add_cpu_", [&](auto t) {
    using T = decltype(t);
    const T a = common::scalar_to<T>(alpha);
    const T* s = static_cast<const T*>(src.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    cpu::for_each_line<2>(sizes, dim, {src.strides(), out.strides()}, true,
                          [&](const std::array<int64_t, 2>& off) {
                            for (int64_t j = 0; j < n; ++j) {
                              T& y = o[off[1] + idx[j] * os];
                              y = add_scaled(y, s[off[0] + j * ss], a);
                            }
                          });
  });
}

}  // namespace opd::native
