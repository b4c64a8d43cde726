// CPU impls of the structured amax.out and amin.out; the loop is cpu/reduce_loop.h's.

#include <limits>
#include <type_traits>

#include "common/reduction.h"
#include "common/type_dispatch.h"
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

template <bool kMax>
void minmax_into(const char* op, const Tensor& self, IntArrayRef dim, const Tensor& out) {
  const common::DimMask mask = common::make_dim_mask(dim, self.dim());
  common::visit_dtype<false>(self.scalar_type(), op, [&](auto t) {
    using T = decltype(t);
    run_reduction<T>(self, mask, MinMaxReducer<T, kMax>{static_cast<T*>(out.data_ptr())});
  });
}

}  // namespace

void amax_out(const Tensor& self, IntArrayRef dim, bool, const Tensor& out) {
  minmax_into<true>("amax", self, dim, out);
}

void amin_out(const Tensor& self, IntArrayRef dim, bool, const Tensor& out) {
  minmax_into<false>("amin", self, dim, out);
}

}  // namespace opd::native
