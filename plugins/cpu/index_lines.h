#pragma once

// The loop of the CPU's gather, scatter*, index_add and masked_fill kernels (PyTorch's
// cpu_scatter_gather_base_kernel walks the same way): the elements of a shape, line by line
// along one dimension `dim`, with the element offsets of several strided operands.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "cpu/parallel.h"
#include "opd/tensor.h"

namespace opd::cpu {

// Calls line(offsets) once per line of `sizes` along `dim`: every combination of the other
// dimensions' indices, with offsets[k] = the element offset, in operand k's `strides[k]`, of the
// line's first element (index 0 along dim). A 0-dim shape is one line of one element (strides
// ignored). Lines run in parallel chunks when `parallel`, so `line` must then write only
// memory of its own line. Each strides[k] has sizes.size() entries.
template <size_t N, class F>
void for_each_line(IntArrayRef sizes, int64_t dim, const std::array<IntArrayRef, N>& strides,
                   bool parallel, F&& line) {
  std::vector<int64_t> outer;
  std::array<std::vector<int64_t>, N> outer_strides;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d == dim) continue;
    outer.push_back(sizes[d]);
    for (size_t k = 0; k < N; ++k) outer_strides[k].push_back(strides[k][d]);
  }
  int64_t lines = 1;
  for (int64_t s : outer) lines *= s;
  const int64_t n = sizes.empty() ? 1 : sizes[dim];
  if (lines == 0 || n == 0) return;
  const int64_t nd = static_cast<int64_t>(outer.size());
  auto chunk = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> coord(nd);
    std::array<int64_t, N> off{};
    for (int64_t d = nd - 1, rest = begin; d >= 0; --d) {
      coord[d] = rest % outer[d];
      rest /= outer[d];
      for (size_t k = 0; k < N; ++k) off[k] += coord[d] * outer_strides[k][d];
    }
    for (int64_t r = begin; r < end; ++r) {
      line(off);
      for (int64_t d = nd - 1; d >= 0; --d) {  // the next line's coordinates and offsets
        if (++coord[d] < outer[d]) {
          for (size_t k = 0; k < N; ++k) off[k] += outer_strides[k][d];
          break;
        }
        coord[d] = 0;
        for (size_t k = 0; k < N; ++k) off[k] -= (outer[d] - 1) * outer_strides[k][d];
      }
    }
  };
  if (parallel) {
    parallel_for(0, lines, std::max<int64_t>(1, (1 << 15) / n), chunk);
  } else {
    chunk(0, lines);
  }
}

}  // namespace opd::cpu
