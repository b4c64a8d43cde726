// CPU impl of the structured linalg_vector_norm.out (norm's kernel too); the loop is
// cpu/reduce_loop.h's, with the accumulators of Note [Vectorised reductions].

#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "common/reduction.h"
#include "common/type_dispatch.h"
#include "cpu/reduce_loop.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using namespace cpu::reduction;

// The orders with a loop of their own; kP is any other: (sum |x|^p)^(1/p).
enum class NormKind { kZero, kOne, kTwo, kInf, kNegInf, kP };

template <class T>
struct RealOf {
  using type = T;
};
template <class T>
struct RealOf<std::complex<T>> {
  using type = T;
};

// The norm of T (complex: of |x|) into its real type R, accumulated in A.
template <class T, NormKind kKind>
struct NormReducer
    : ElementwiseReducer<
          NormReducer<T, kKind>, T,
          std::conditional_t<std::is_same_v<typename RealOf<T>::type, double>, double, float>> {
  using R = typename RealOf<T>::type;
  using A = std::conditional_t<std::is_same_v<R, double>, double, float>;
  static constexpr vec::Fold kVecFold = kKind == NormKind::kTwo   ? vec::Fold::kSumSquares
                                        : kKind == NormKind::kOne ? vec::Fold::kSumAbs
                                                                  : vec::Fold::kNone;
  R* out;
  A p;

  NormReducer(R* o, A order) : out(o), p(order) {}
  A init() const {
    if constexpr (kKind == NormKind::kNegInf) return std::numeric_limits<A>::infinity();
    return A(0);
  }
  A load(T v) const {
    if constexpr (cpu::kIsComplex<T>)
      return static_cast<A>(std::abs(v));
    else
      return to_acc<A>(v);
  }
  template <class V>
  static V abs(V v) {
    return v < 0 ? -v : v;
  }
  template <class V>
  V map(V v) const {
    if constexpr (kKind == NormKind::kZero) {
      return v != 0 ? V{} + A(1) : V{};
    } else if constexpr (kKind == NormKind::kTwo) {
      return v * v;
    } else if constexpr (kKind == NormKind::kP) {
      if constexpr (std::is_same_v<V, A>) {
        return std::pow(abs(v), p);
      } else {
        V r;
        for (int64_t l = 0; l < simd::kLanes<A>; ++l) r[l] = std::pow(abs(A(v[l])), p);
        return r;
      }
    } else {
      return abs(v);
    }
  }
  template <class V>
  V op(V a, V b) const {
    if constexpr (kKind == NormKind::kInf)
      return ((b > a) | (b != b)) ? b : a;
    else if constexpr (kKind == NormKind::kNegInf)
      return ((b < a) | (b != b)) ? b : a;
    else
      return a + b;
  }
  void write(int64_t o, A a) const {
    if constexpr (kKind == NormKind::kTwo)
      out[o] = convert<R>(std::sqrt(a));
    else if constexpr (kKind == NormKind::kP)
      out[o] = convert<R>(std::pow(a, A(1) / p));
    else
      out[o] = convert<R>(a);
  }
};

template <class T, NormKind kKind>
void norm_into(const Tensor& self, const common::DimMask& mask, const Tensor& out, double p) {
  using R = typename RealOf<T>::type;
  NormReducer<T, kKind> r(static_cast<R*>(out.data_ptr()), static_cast<decltype(r.p)>(p));
  run_reduction<T>(self, mask, r);
}

}  // namespace

void linalg_vector_norm_out(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool,
                            std::optional<ScalarType> dtype, const Tensor& out) {
  const common::DimMask mask = common::make_dim_mask(dim, self.dim());
  // With a dtype the input is converted first, as PyTorch does.
  const Tensor in = dtype && *dtype != self.scalar_type()
                        ? contiguous_as(self, *dtype, "linalg_vector_norm")
                        : self;
  const double p = ord.to<double>();
  const double inf = std::numeric_limits<double>::infinity();
  common::visit_dtype<true>(in.scalar_type(), "linalg_vector_norm", [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsFloat<T> || cpu::kIsComplex<T>) {
      if (p == 0)
        norm_into<T, NormKind::kZero>(in, mask, out, p);
      else if (p == 1)
        norm_into<T, NormKind::kOne>(in, mask, out, p);
      else if (p == 2)
        norm_into<T, NormKind::kTwo>(in, mask, out, p);
      else if (p == inf)
        norm_into<T, NormKind::kInf>(in, mask, out, p);
      else if (p == -inf)
        norm_into<T, NormKind::kNegInf>(in, mask, out, p);
      else
        norm_into<T, NormKind::kP>(in, mask, out, p);
    } else {
      common::throw_not_implemented_for("linalg_vector_norm", in.scalar_type());
    }
  });
}

}  // namespace opd::native
