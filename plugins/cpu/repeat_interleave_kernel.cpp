// repeat_interleave.Tensor on the CPU: for repeats [r0, r1, ...], the indices 0 (r0 times),
// 1 (r1 times), ... in repeats' dtype; the index tensor repeat_interleave.self_Tensor selects
// with (plugins/composite/repeat_interleave_composite.cpp). The checks are PyTorch 1.13's, in
// its order: the dtype, the rank, no negative count, then output_size against the total.

#include <cstdint>
#include <optional>

#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "opd/error.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

template <class I>
Tensor expand_counts(const Tensor& repeats, std::optional<int64_t> output_size) {
  const I* counts = static_cast<const I*>(repeats.data_ptr());
  const int64_t n = repeats.size(0), step = repeats.stride(0);
  int64_t total = 0;
  bool negative = false;
  for (int64_t i = 0; i < n; ++i) {
    negative |= counts[i * step] < 0;
    total += counts[i * step];
  }
  OPD_CHECK(!negative, "repeats can not be negative");
  OPD_CHECK(!output_size || *output_size == total, "allocated size does not match required size");
  Tensor result = cpu::empty_cpu({total}, repeats.scalar_type());
  I* out = static_cast<I*>(result.data_ptr());
  for (int64_t i = 0, j = 0; i < n; ++i) {
    for (I k = 0; k < counts[i * step]; ++k) out[j++] = static_cast<I>(i);
  }
  return result;
}

}  // namespace

Tensor repeat_interleave_Tensor(const Tensor& repeats, std::optional<int64_t> output_size) {
  const ScalarType t = repeats.scalar_type();
  if (t != kInt && t != kLong) common::throw_not_implemented_for("repeat_interleave_cpu", t);
  OPD_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  return t == kInt ? expand_counts<int32_t>(repeats, output_size)
                   : expand_counts<int64_t>(repeats, output_size);
}

}  // namespace opd::native
