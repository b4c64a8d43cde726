// CPU impl of the structured argmax.out, and the kernel of max.dim; the loop is
// cpu/reduce_loop.h's.

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

// argmax and max.dim: the first largest element (the first NaN if any) and its index.
template <class T>
struct ArgMaxReducer {
  struct acc_t {
    T value{};
    int64_t index = -1;  // -1 until an element was seen
  };
  T* values;  // null for argmax
  int64_t* indices;

  acc_t init() const { return {}; }
  void step(acc_t& a, T v, int64_t i) const {
    if (a.index < 0 || (!is_nan(a.value) && (v > a.value || is_nan(v)))) a = {v, i};
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t stride, int64_t first) const {
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

void argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  const common::DimMask mask = common::argmax_meta(self, dim, keepdim).mask;
  common::visit_dtype<false>(self.scalar_type(), "argmax", [&](auto t) {
    using T = decltype(t);
    run_reduction<T>(self, mask, ArgMaxReducer<T>{nullptr, out.data_ptr<int64_t>()});
  });
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  const ReductionMeta m = common::max_dim_meta(self, dim, keepdim);
  Tensor values = cpu::empty_cpu(m.sizes, m.dtype);
  Tensor indices = cpu::empty_cpu(m.sizes, kLong);
  common::visit_dtype<false>(self.scalar_type(), "max", [&](auto t) {
    using T = decltype(t);
    run_reduction<T>(
        self, m.mask,
        ArgMaxReducer<T>{static_cast<T*>(values.data_ptr()), indices.data_ptr<int64_t>()});
  });
  return {values, indices};
}

}  // namespace opd::native
