// The loop shared by the CPU reductions (reduce_sum_kernels.cpp, reduce_minmax_kernels.cpp,
// reduce_arg_kernels.cpp): it walks the input along a ReductionPlan (Note [Reduction geometry])
// and hands the elements to a Reducer, which accumulates in double for floating types, int64 for
// integers and bool, complex<double> for complex types. Their metadata (dims, shapes, dtypes,
// errors) comes from common/reduction.h, as Meta's does.

#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/reduction.h"
#include "cpu/convert.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/tensor.h"

namespace opd::cpu::reduction {

using common::DimMask;
using common::ReductionMeta;
using common::ReductionPlan;

// Input elements per parallel chunk.
inline constexpr int64_t kGrain = 32768;
// Outputs accumulated side by side when the innermost kept dim is the contiguous one.
inline constexpr int64_t kTile = 16;

// Floating point, the 16-bit types included.
template <class T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

using cpu::convert;

template <class T>
bool is_nan(T v) {
  if constexpr (kIsFloat<T>)
    return std::isnan(static_cast<float>(v));
  else
    return false;
}

// Runs a reduction of `self` over `mask`. A Reducer R over elements T provides
//   using acc_t;                      the running state of one output
//   acc_t init() const;
//   void row(acc_t&, const T* p, int64_t n, int64_t stride, int64_t first) const;
//                                     folds p[k * stride], numbered first + k, in order
//   void step(acc_t&, T value, int64_t index) const;      folds one element
//   void combine(acc_t& a, const acc_t& b) const;         folds b, whose elements follow a's
//   void write(int64_t out_index, const acc_t&) const;
// Work is split over outputs; a few outputs with many elements each split their elements
// instead, and combine the pieces in order (so argmax keeps the first maximum).
template <class T, class R>
void run_reduction(const Tensor& self, const DimMask& mask, const R& r) {
  using Acc = typename R::acc_t;
  const ReductionPlan plan = common::make_reduction_plan(self.sizes(), self.strides(), mask);
  if (plan.num_outputs == 0) return;
  const T* in = static_cast<const T*>(self.data_ptr());

  auto fold = [&](Acc& acc, const ReductionPlan& p, int64_t base, int64_t first0) {
    common::for_each_reduced_row(p, base, [&](int64_t off, int64_t n, int64_t st, int64_t first) {
      r.row(acc, in + off, n, st, first0 + first);
    });
  };

  if (plan.num_outputs < cpu::get_num_threads() && plan.reduced_numel >= 2 * kGrain &&
      !plan.reduced_sizes.empty()) {
    const int64_t outer = plan.reduced_sizes[0];
    const int64_t inner = plan.reduced_numel / outer;
    for (int64_t o = 0; o < plan.num_outputs; ++o) {
      const int64_t base = common::input_offset(plan, o);
      std::mutex mu;
      std::vector<std::pair<int64_t, Acc>> parts;
      cpu::parallel_for(0, outer, std::max<int64_t>(1, kGrain / inner), [&](int64_t a, int64_t b) {
        ReductionPlan piece = plan;
        piece.reduced_sizes[0] = b - a;
        piece.reduced_numel = (b - a) * inner;
        Acc acc = r.init();
        fold(acc, piece, base + a * plan.reduced_strides[0], a * inner);
        std::lock_guard<std::mutex> lock(mu);
        parts.emplace_back(a, acc);
      });
      std::sort(parts.begin(), parts.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      Acc acc = r.init();
      for (const auto& part : parts) r.combine(acc, part.second);
      r.write(o, acc);
    }
    return;
  }

  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, plan.reduced_numel));
  const bool tiled = !plan.kept_sizes.empty() && plan.kept_strides.back() == 1 &&
                     !plan.reduced_sizes.empty() && plan.reduced_strides.back() != 1;
  if (!tiled) {
    cpu::parallel_for(0, plan.num_outputs, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        Acc acc = r.init();
        fold(acc, plan, common::input_offset(plan, o), 0);
        r.write(o, acc);
      }
    });
    return;
  }
  // The kept innermost dim is contiguous and the reduced ones are not (a sum over rows):
  // accumulate up to kTile neighbouring outputs at once, reading each input row contiguously.
  const int64_t row_len = plan.kept_sizes.back();
  cpu::parallel_for(0, plan.num_outputs, grain, [&](int64_t begin, int64_t end) {
    Acc acc[kTile];
    for (int64_t o = begin; o < end;) {
      const int64_t w = std::min({kTile, row_len - o % row_len, end - o});
      for (int64_t j = 0; j < w; ++j) acc[j] = r.init();
      common::for_each_reduced_row(plan, common::input_offset(plan, o),
                                   [&](int64_t off, int64_t n, int64_t st, int64_t first) {
                                     for (int64_t k = 0; k < n; ++k) {
                                       const T* p = in + off + k * st;
                                       for (int64_t j = 0; j < w; ++j)
                                         r.step(acc[j], p[j], first + k);
                                     }
                                   });
      for (int64_t j = 0; j < w; ++j) r.write(o + j, acc[j]);
      o += w;
    }
  });
}

}  // namespace opd::cpu::reduction
