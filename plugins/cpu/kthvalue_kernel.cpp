// CPU kernel of kthvalue.values: the k-th smallest element of each line along dim and its index,
// found with std::nth_element. NaN is larger than every number, as in sort. Among equal values
// the one earlier in the line counts as smaller, so the answer is the k-th of the stable sort;
// PyTorch's quickselect promises nothing about which of tied elements it returns (values agree).

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/kthvalue_shape.h"
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

// a before b: smaller, NaN last, then earlier.
template <class K>
bool before(const std::pair<K, int64_t>& a, const std::pair<K, int64_t>& b) {
  if (is_nan(a.first) || is_nan(b.first)) {
    if (is_nan(a.first) != is_nan(b.first)) return is_nan(b.first);
  } else if (a.first != b.first) {
    return a.first < b.first;
  }
  return a.second < b.second;
}

// values/indices (contiguous, the kept-dimension shape) of the k-th element of self's lines.
void kthvalue_into(const Tensor& self, int64_t k, int64_t dim, const Tensor& values,
                   const Tensor& indices) {
  const Tensor src = self.is_contiguous() ? self : self.contiguous();
  int64_t outer = 1, n = 1, inner = 1;
  if (self.dim() > 0) {
    n = self.size(dim);
    for (int64_t d = 0; d < dim; ++d) outer *= self.size(d);
    for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  }
  common::visit_dtype<false>(self.scalar_type(), "kthvalue_cpu", [&](auto t) {
    using T = decltype(t);
    using K = decltype(key_of(T{}));
    const T* s = static_cast<const T*>(src.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* x = indices.data_ptr<int64_t>();
    cpu::parallel_for(0, outer * inner, std::max<int64_t>(1, (1 << 14) / n),
                      [&](int64_t begin, int64_t end) {
                        std::vector<std::pair<K, int64_t>> e(n);
                        for (int64_t line = begin; line < end; ++line) {
                          const int64_t o = line / inner, i = line % inner;
                          const T* p = s + o * n * inner + i;
                          for (int64_t j = 0; j < n; ++j) e[j] = {key_of(p[j * inner]), j};
                          std::nth_element(e.begin(), e.begin() + (k - 1), e.end(), before<K>);
                          v[line] = p[e[k - 1].second * inner];
                          x[line] = e[k - 1].second;
                        }
                      });
  });
}

}  // namespace

std::tuple<Tensor&, Tensor&> kthvalue_values(const Tensor& self, int64_t k, int64_t dim,
                                             bool keepdim, Tensor& values, Tensor& indices) {
  dim = common::kthvalue_prepare(self, k, dim, values, indices, keepdim);
  if (values.numel() > 0) {
    if (values.is_contiguous() && indices.is_contiguous()) {
      kthvalue_into(self, k, dim, values, indices);
    } else {
      Tensor v = cpu::empty_cpu(values.sizes(), values.scalar_type());
      Tensor x = cpu::empty_cpu(indices.sizes(), kLong);
      kthvalue_into(self, k, dim, v, x);
      values.copy_(v);
      indices.copy_(x);
    }
  }
  values.bump_version();
  indices.bump_version();
  common::kthvalue_finish(self, dim, values, indices, keepdim);
  return {values, indices};
}

}  // namespace opd::native
