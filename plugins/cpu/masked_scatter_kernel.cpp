// CPU kernel of masked_scatter_: self's elements where the mask (broadcast to self's shape) is
// true take source's elements in turn, source read in its row-major order. The functional form
// is a composite (plugins/composite/masked_scatter_composite.cpp), as PyTorch's.
//
// Note [masked_scatter_'s order]
// PyTorch 1.13 walks self in its TensorIterator's order, which follows self's strides (memory
// order), not its row-major order: a transposed self takes source's elements column by column.
// The walk here is the same iterator's (common/tensor_iterator.h orders dimensions as PyTorch's).
// PyTorch raises "Number of elements of source < number of ones in mask" when it runs out of
// source in the middle of the walk, having written part of self; the ones are counted first
// here, so self is left as it was.

#include <cstdint>

#include "common/masked_scatter_check.h"
#include "common/tensor_iterator.h"
#include "cpu/element_words.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

// Calls f(self_element_address, mask_byte) for self's elements in the iterator's order.
template <class F>
void walk_with_mask(const common::TensorIterator& iter, F&& f) {
  iter.serial_for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        for (int64_t j = 0; j < n; ++j) {
          f(data[0] + j * strides[0], static_cast<uint8_t>(data[1][j * strides[1]]));
        }
      },
      0, iter.numel());
}

}  // namespace

Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  const Tensor m = common::masked_scatter_mask(self, mask, source);
  if (self.numel() == 0) return self;
  const common::TensorIterator iter = common::TensorIteratorConfig("masked_scatter_")
                                          .add_output(self)
                                          .add_input(m)
                                          .check_all_same_dtype(false)
                                          .check_mem_overlap(false)
                                          .resize_outputs(false)
                                          .build();
  int64_t ones = 0;
  walk_with_mask(iter, [&](char*, uint8_t on) { ones += on != 0; });
  OPD_CHECK(ones <= source.numel(), "Number of elements of source < number of ones in mask");
  if (ones == 0) return self;
  const Tensor src = source.contiguous();
  cpu::visit_word(element_size(self.scalar_type()), [&](auto w) {
    using W = decltype(w);
    const W* from = static_cast<const W*>(src.data_ptr());
    walk_with_mask(iter, [&](char* to, uint8_t on) {
      if (on) *reinterpret_cast<W*>(to) = *from++;
    });
  });
  self.bump_version();
  return self;
}

}  // namespace opd::native
