// CPU impls of the structured argmax.out and argmin.out, and the kernels of max.dim and min.dim;
// the loop is cpu/reduce_loop.h's.

#include <algorithm>
#include <optional>
#include <tuple>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/reduce_loop.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using namespace cpu::reduction;

// argmax and max.dim (kMax), argmin and min.dim: the first largest (smallest) element, the
// first NaN if any, and its index.
template <class T, bool kMax>
struct ArgMaxReducer {
  struct acc_t {
    T value{};
    int64_t index = -1;  // -1 until an element was seen
  };
  T* values;  // null for argmax
  int64_t* indices;

  acc_t init() const { return {}; }
  void step(acc_t& a, T v, int64_t i) const {
    if (a.index < 0 || (!is_nan(a.value) && ((kMax ? v > a.value : v < a.value) || is_nan(v))))
      a = {v, i};
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t stride, int64_t first) const {
    if constexpr (vec::kHasAvx2<T>) {
      // Note [AVX2 reductions]: runs of under 2^31 elements, each one's first extremum.
      constexpr int64_t kRun = int64_t(1) << 30;
      if (stride == 1 && n >= 16) {
        if (const auto f = vec::arg_fn<T>(kMax)) {
          for (int64_t c = 0; c < n; c += kRun) {
            const int64_t i = c + f(p + c, std::min(kRun, n - c));
            step(a, p[i], first + i);
          }
          return;
        }
      }
    }
    for (int64_t k = 0; k < n; ++k) step(a, p[k * stride], first + k);
  }
  void combine(acc_t& a, const acc_t& b) const {
    if (b.index >= 0) step(a, b.value, b.index);
  }
  void write(int64_t o, const acc_t& a) const {
    if (values) values[o] = a.value;
    indices[o] = a.index;
  }
};

}  // namespace

namespace {

template <bool kMax>
void arg_into(const char* op, const Tensor& self, const common::DimMask& mask, void* values,
              int64_t* indices) {
  common::visit_dtype<false>(self.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    run_reduction<T>(self, mask, ArgMaxReducer<T, kMax>{static_cast<T*>(values), indices});
  });
}

template <bool kMax>
std::tuple<Tensor, Tensor> value_and_index(const char* op, const Tensor& self, int64_t dim,
                                           bool keepdim) {
  const ReductionMeta m = common::max_dim_meta(op, self, dim, keepdim);
  Tensor values = cpu::empty_cpu(m.sizes, m.dtype);
  Tensor indices = cpu::empty_cpu(m.sizes, kLong);
  arg_into<kMax>(op, self, m.mask, values.data_ptr(), indices.data_ptr<int64_t>());
  return {values, indices};
}

}  // namespace

void argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  const common::DimMask mask = common::argmax_meta("argmax", self, dim, keepdim).mask;
  arg_into<true>("argmax", self, mask, nullptr, out.data_ptr<int64_t>());
}

void argmin_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  const common::DimMask mask = common::argmax_meta("argmin", self, dim, keepdim).mask;
  arg_into<false>("argmin", self, mask, nullptr, out.data_ptr<int64_t>());
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return value_and_index<true>("max", self, dim, keepdim);
}

std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return value_and_index<false>("min", self, dim, keepdim);
}

}  // namespace opd::native
