// CPU kernels of amax and amin; the loop is cpu/reduce_loop.h's.

#include <limits>
#include <type_traits>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/reduce_loop.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using namespace cpu::reduction;

// amax / amin: NaN wins, as in PyTorch.
template <class T, bool kMax>
struct MinMaxReducer {
  using acc_t = T;
  T* out;

  acc_t init() const {
    if constexpr (std::is_same_v<T, bool>)
      return !kMax;
    else if constexpr (kIsFloat<T>)
      return T(kMax ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity());
    else
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  void step(acc_t& a, T v, int64_t) const {
    if ((kMax ? v > a : v < a) || is_nan(v)) a = v;
  }
  void row(acc_t& a, const T* p, int64_t n, int64_t stride, int64_t) const {
    for (int64_t k = 0; k < n; ++k) step(a, p[k * stride], 0);
  }
  void combine(acc_t& a, const acc_t& b) const { step(a, b, 0); }
  void write(int64_t o, const acc_t& a) const { out[o] = a; }
};

Tensor minmax_impl(const char* op, bool is_max, const Tensor& self, IntArrayRef dim, bool keepdim) {
  const ReductionMeta m = common::amax_meta(op, self, dim, keepdim);
  Tensor out = cpu::empty_cpu(m.sizes, m.dtype);
  common::visit_dtype<false>(self.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    T* o = static_cast<T*>(out.data_ptr());
    if (is_max)
      run_reduction<T>(self, m.mask, MinMaxReducer<T, true>{o});
    else
      run_reduction<T>(self, m.mask, MinMaxReducer<T, false>{o});
  });
  return out;
}

}  // namespace

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return minmax_impl("amax", true, self, dim, keepdim);
}

Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return minmax_impl("amin", false, self, dim, keepdim);
}

}  // namespace opd::native
