// CPU kernels of the shape operators that move data: flip (elements in reverse order along some
// dimensions) and tril / triu (a matrix's lower or upper triangle, the rest zero), with their
// in-place forms. Shapes and checks are common/index_shape.h's (shared with Meta). Elements are
// moved as opaque words of their size, so every dtype is served.

#include <complex>
#include <cstring>

#include "common/index_shape.h"
#include "common/output.h"
#include "cpu/allocator.h"
#include "cpu/element_words.h"
#include "cpu/parallel.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

constexpr int64_t kGrain = 1 << 15;

using cpu::visit_word;

// tril (lower) or triu: writes `out` (contiguous, of self's shape) from self, or zeroes self in
// place when out is undefined. Element (.., i, j) is kept when j - i <= diagonal (tril) or
// j - i >= diagonal (triu).
void triangle(const Tensor& self, int64_t diagonal, bool lower, const Tensor& out) {
  common::check_triangle_input(self, lower ? "tril" : "triu");
  const int64_t rows = self.size(-2), cols = self.size(-1);
  const int64_t n = self.numel();
  if (n == 0) return;
  visit_word(element_size(self.scalar_type()), [&](auto w) {
    using W = decltype(w);
    W* src = static_cast<W*>(self.data_ptr());
    W* dst = out.defined() ? static_cast<W*>(out.data_ptr()) : nullptr;
    cpu::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      int64_t j = begin % cols, i = (begin / cols) % rows;
      common::walk_strided(self.sizes(), self.strides(), begin, end, [&](int64_t l, int64_t off) {
        const bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
        if (dst) {
          dst[l] = keep ? src[off] : W{};
        } else if (!keep) {
          src[off] = W{};
        }
        if (++j == cols) {
          j = 0;
          if (++i == rows) i = 0;
        }
      });
    });
  });
}

}  // namespace

Tensor flip(const Tensor& self, IntArrayRef dims) {
  const std::vector<bool> flipped = common::flip_dims(self, dims);
  Tensor out = cpu::empty_cpu(self.sizes(), self.scalar_type());
  if (out.numel() == 0) return out;
  // Self read from its last element along each flipped dimension, with that stride negated.
  std::vector<int64_t> strides(self.strides().begin(), self.strides().end());
  int64_t start = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!flipped[d]) continue;
    start += (self.size(d) - 1) * strides[d];
    strides[d] = -strides[d];
  }
  visit_word(element_size(self.scalar_type()), [&](auto w) {
    using W = decltype(w);
    const W* src = static_cast<const W*>(self.data_ptr()) + start;
    W* dst = static_cast<W*>(out.data_ptr());
    cpu::parallel_for(0, out.numel(), kGrain, [&](int64_t begin, int64_t end) {
      common::walk_strided(self.sizes(), strides, begin, end,
                           [&](int64_t l, int64_t off) { dst[l] = src[off]; });
    });
  });
  return out;
}

Tensor tril(const Tensor& self, int64_t diagonal) {
  common::check_triangle_input(self, "tril");
  Tensor out = cpu::empty_cpu(self.sizes(), self.scalar_type());
  triangle(self, diagonal, /*lower=*/true, out);
  return out;
}

Tensor triu(const Tensor& self, int64_t diagonal) {
  common::check_triangle_input(self, "triu");
  Tensor out = cpu::empty_cpu(self.sizes(), self.scalar_type());
  triangle(self, diagonal, /*lower=*/false, out);
  return out;
}

Tensor& tril_(Tensor& self, int64_t diagonal) {
  triangle(self, diagonal, /*lower=*/true, Tensor());
  return self;
}

Tensor& triu_(Tensor& self, int64_t diagonal) {
  triangle(self, diagonal, /*lower=*/false, Tensor());
  return self;
}

}  // namespace opd::native
