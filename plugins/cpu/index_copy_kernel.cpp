// CPU impl of the structured index_copy (index_copy.out; index_copy and index_copy_ delegate to
// it): out = self, then out's slices along dim at the indexed positions take source's slices in
// order, a repeated index keeping the last. The checks of the arguments are the meta
// function's (common/index_copy_meta.cpp); the index values are checked here, before anything
// is written: PyTorch 1.13 wraps no negative index ("index_copy_(): index -1 is out of bounds
// for dimension 0 with size 3", an IndexError).

#include <array>
#include <cstdint>

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
  const int64_t os = o.stride(dim), ss = s.stride(dim);
  cpu::visit_word(element_size(out.scalar_type()), [&](auto w) {
    using W = decltype(w);
    W* to = static_cast<W*>(o.data_ptr());
    const W* from = static_cast<const W*>(s.data_ptr());
    // Lines of source along dim; each writes only its own line of out.
    cpu::for_each_line<2>(s.sizes(), dim, {s.strides(), o.strides()}, true,
                          [&](const std::array<int64_t, 2>& off) {
                            for (int64_t j = 0; j < n; ++j) {
                              to[off[1] + ip[j] * os] = from[off[0] + j * ss];
                            }
                          });
  });
}

}  // namespace opd::native
