// Binary and ternary arithmetic of floating values on the CPU: atan2, hypot, copysign, lerp,
// addcmul and addcdiv. Half and BFloat16 compute in float (opmath_t) and round once.

#include <cmath>
#include <complex>
#include <type_traits>

#include "common/elementwise.h"
#include "common/loops.h"
#include "cpu/elementwise_loops.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::opmath_t;
using common::TensorIterator;
using cpu::cpu_kernel;

// out = op(a, b) in opmath over the types OPD_DISPATCH_FLOATING_TYPES_AND names; float and
// double take the vector loop of `vec_op` where the CPU has one (Note [Binary kernels in AVX2]).
template <class Op>
void floating_binary_kernel(const TensorIterator& iter, const char* name, const Op& op,
                            cpu::vec::BinaryVecOp vec_op) {
  OPD_DISPATCH_FLOATING_TYPES_AND2(kHalf, kBFloat16, iter.common_dtype(), name, [&] {
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      cpu::cpu_binary_kernel_vec<scalar_t>(iter, op, cpu::vec::vec_binary<scalar_t>(vec_op));
    } else {
      using opmath = opmath_t<scalar_t>;
      cpu_kernel(iter, [op](scalar_t a, scalar_t b) -> scalar_t {
        return static_cast<scalar_t>(op(opmath(a), opmath(b)));
      });
    }
  });
}

// PyTorch's lerp: from the nearer end, so that weight 0 gives self and 1 gives end exactly.
template <class T, class W>
T lerp(T self, T end, W weight) {
  using std::abs;
  return abs(weight) < 0.5 ? self + weight * (end - self) : end - (end - self) * (W(1) - weight);
}

}  // namespace

// The structured impls (Note [Structured kernels] in tools/gen/structured.h). The metadata
// step has refused the dtypes PyTorch's kernels lack (Half for atan2 and hypot).
void atan2_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  floating_binary_kernel(
      iter, "atan2_cpu", [](auto a, auto b) { return std::atan2(a, b); },
      cpu::vec::BinaryVecOp::Atan2);
}

void hypot_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  floating_binary_kernel(
      iter, "hypot_cpu", [](auto a, auto b) { return std::hypot(a, b); },
      cpu::vec::BinaryVecOp::Hypot);
}

void copysign_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  floating_binary_kernel(
      iter, "copysign_cpu", [](auto a, auto b) { return std::copysign(a, b); },
      cpu::vec::BinaryVecOp::Copysign);
}

void lerp_Scalar_out(const TensorIterator& iter, const Tensor&, const Tensor&,
                     const Scalar& weight) {
  OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND(
      kBFloat16, iter.common_dtype(), "lerp_kernel_scalar", [&] {
        using opmath = opmath_t<scalar_t>;
        const auto w = common::scalar_to<opmath>(weight);
        cpu_kernel(iter, [w](scalar_t self, scalar_t end) -> scalar_t {
          return static_cast<scalar_t>(lerp(opmath(self), opmath(end), w));
        });
      });
}

void lerp_Tensor_out(const TensorIterator& iter, const Tensor&, const Tensor&, const Tensor&) {
  OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND(
      kBFloat16, iter.common_dtype(), "lerp_kernel_tensor", [&] {
        using opmath = opmath_t<scalar_t>;
        cpu_kernel(iter, [](scalar_t self, scalar_t end, scalar_t weight) -> scalar_t {
          return static_cast<scalar_t>(lerp(opmath(self), opmath(end), opmath(weight)));
        });
      });
}

void addcmul_out(const TensorIterator& iter, const Tensor&, const Tensor&, const Tensor&,
                 const Scalar& value) {
  OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND(kBFloat16, iter.common_dtype(), "addcmul_cpu_out", [&] {
    using opmath = opmath_t<scalar_t>;
    const auto v = common::scalar_to<opmath>(value);
    cpu_kernel(iter, [v](scalar_t self, scalar_t t1, scalar_t t2) -> scalar_t {
      return static_cast<scalar_t>(opmath(self) + v * opmath(t1) * opmath(t2));
    });
  });
}

void addcdiv_out(const TensorIterator& iter, const Tensor&, const Tensor&, const Tensor&,
                 const Scalar& value) {
  OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND(kBFloat16, iter.common_dtype(), "addcdiv_cpu_out", [&] {
    using opmath = opmath_t<scalar_t>;
    const auto v = common::scalar_to<opmath>(value);
    cpu_kernel(iter, [v](scalar_t self, scalar_t t1, scalar_t t2) -> scalar_t {
      return static_cast<scalar_t>(opmath(self) + v * opmath(t1) / opmath(t2));
    });
  });
}

}  // namespace opd::native
