// CPU impl of the structured index_copy (index_copy.out; index_copy and index_copy_ delegate to
// it): out = self, then out's slices along dim at the indexed positions take source's slices in
// order, a repeated index keeping the last. The checks of the arguments are the meta
// function's (common/index_copy_meta.cpp); the index values are checked here, before anything
// is written: PyTorch 1.13 wraps no negative index ("index_copy_(): index -1 is out of bounds
// for dimension 0 with size 3", an IndexError).

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "cpu/element_words.h"
#include "cpu/index_lines.h"
#include "opd/native/CPU.h"

namespace opd::native {

void index_copy_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    const Tensor& out) {
  if (!out.is_same(self)) out.copy_(self);
  dim = maybe_wrap_dim(dim, self.dim());
  const Tensor idx = index.contiguous();
  const auto* ip = static_cast<const int64_t*>(idx.data_ptr());
  const int64_t n = idx.numel();
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  for (int64_t j = 0; j < n; ++j) {
    OPD_CHECK_T(IndexError, ip[j] >= 0 && ip[j] < size,
                "index_copy_(): index {} is out of bounds for dimension {} with size {}", ip[j],
                dim, size);
  }
  if (n == 0 || out.numel() == 0) return;
  // A 0-dim self or source (a single slice of one element) is seen as one of shape [1].
  const Tensor o = out.dim() == 0 ? out.view({1}) : out;
  const Tensor s = source.dim() == 0 ? source.view({1}) : source;
  // Slice by slice: source's slice j to out's slice idx[j], each walked along its last dimension
  // (the rows of a row-major tensor copied as rows, not as columns). A repeated index keeps the
  // last.
  std::vector<int64_t> sizes, to_strides, from_strides;
  for (int64_t d = 0; d < o.dim(); ++d) {
    if (d == dim) continue;
    sizes.push_back(o.size(d));
    to_strides.push_back(o.stride(d));
    from_strides.push_back(s.stride(d));
  }
  const int64_t last = static_cast<int64_t>(sizes.size()) - 1;
  const int64_t len = sizes.empty() ? 1 : sizes.back();
  const int64_t ts = sizes.empty() ? 0 : to_strides.back();
  const int64_t fs = sizes.empty() ? 0 : from_strides.back();
  cpu::visit_word(element_size(out.scalar_type()), [&](auto w) {
    using W = decltype(w);
    for (int64_t j = 0; j < n; ++j) {
      W* to = static_cast<W*>(o.data_ptr()) + ip[j] * o.stride(dim);
      const W* from = static_cast<const W*>(s.data_ptr()) + j * s.stride(dim);
      cpu::for_each_line<2>(sizes, std::max<int64_t>(last, 0), {from_strides, to_strides}, true,
                            [&](const std::array<int64_t, 2>& off) {
                              for (int64_t k = 0; k < len; ++k) {
                                to[off[1] + k * ts] = from[off[0] + k * fs];
                              }
                            });
    }
  });
}

}  // namespace opd::native
