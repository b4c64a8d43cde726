// CPU kernel of cat. The result's shape and dtype (result_type of the inputs) come from
// common/nn_shape.h, as Meta's do. Each input is copied into its slice of the result: whole
// blocks with memcpy when it is contiguous and of the result's dtype, else element by element
// (converting when the dtypes differ).

#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>

#include "common/nn_shape.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/convert.h"
#include "cpu/element_words.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

// Bytes copied per parallel chunk.
constexpr int64_t kGrainBytes = 1 << 18;

using cpu::visit_word;

using cpu::convert;

// dst[i] = src[i] over a tensor of `sizes`, each side with its own element strides. Rows (the
// last dim) are the unit of work.
template <class To, class From>
void copy_strided(IntArrayRef sizes, To* dst, IntArrayRef dst_strides, const From* src,
                  IntArrayRef src_strides) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t row = sizes[nd - 1];
  const int64_t ds = dst_strides[nd - 1], ss = src_strides[nd - 1];
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < nd; ++d) rows *= sizes[d];
  const int64_t grain =
      std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(1, row * int64_t(sizeof(To))));
  cpu::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t doff = 0, soff = 0;
      for (int64_t d = nd - 2, rest = r; d >= 0; --d) {
        const int64_t i = rest % sizes[d];
        rest /= sizes[d];
        doff += i * dst_strides[d];
        soff += i * src_strides[d];
      }
      for (int64_t k = 0; k < row; ++k) dst[doff + k * ds] = convert<To>(src[soff + k * ss]);
    }
  });
}

}  // namespace

Tensor cat(TensorList tensors, int64_t dim) {
  const common::CatMeta m = common::cat_meta(tensors, dim);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  if (out.numel() == 0) return out;

  const int64_t d = m.dim;
  const size_t elem = element_size(m.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= m.sizes[i];
  for (int64_t i = d + 1; i < out.dim(); ++i) inner *= m.sizes[i];
  char* out_data = static_cast<char*>(out.data_ptr());

  int64_t offset = 0;  // where along `d` the next input goes
  for (const Tensor& t : tensors) {
    if (common::cat_should_skip(t)) continue;
    const int64_t size_d = t.size(d);
    char* dst = out_data + offset * inner * elem;
    offset += size_d;
    if (t.numel() == 0) continue;
    if (t.scalar_type() == m.dtype && t.is_contiguous()) {
      // Block o of the input is contiguous and lands at block o of the result's rows.
      const char* src = static_cast<const char*>(t.data_ptr());
      const int64_t block = size_d * inner * int64_t(elem);
      const int64_t out_block = m.sizes[d] * inner * int64_t(elem);
      cpu::parallel_for(0, outer, std::max<int64_t>(1, kGrainBytes / block),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t o = begin; o < end; ++o)
                            std::memcpy(dst + o * out_block, src + o * block, block);
                        });
      continue;
    }
    auto copy = [&](auto to, auto from) {
      using To = decltype(to);
      using From = decltype(from);
      copy_strided<To, From>(t.sizes(), reinterpret_cast<To*>(dst), out.strides(),
                             static_cast<const From*>(t.data_ptr()), t.strides());
    };
    if (t.scalar_type() == m.dtype) {
      visit_word(elem, [&](auto w) { copy(w, w); });
    } else {
      common::visit_dtype(m.dtype, "cat", [&](auto to) {
        common::visit_dtype(t.scalar_type(), "cat", [&](auto from) { copy(to, from); });
      });
    }
  }
  return out;
}

}  // namespace opd::native
