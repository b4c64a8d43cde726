// Binary arithmetic on the CPU: add, sub, mul, div, pow, maximum, minimum, where.

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "common/elementwise.h"
#include "common/loops.h"
#include "common/powi.h"
#include "cpu/allocator.h"
#include "cpu/elementwise_loops.h"
#include "cpu/parallel.h"
#include "opd/native/CPU.h"
#include "opd/native/meta_functions.h"

namespace opd::native {
namespace {

using common::opmath_t;
using common::TensorIterator;
using cpu::cpu_binary_kernel_vec;
using cpu::cpu_kernel;
using cpu::vec::BinaryVecOp;
using cpu::vec::vec_binary;

// The dtypes with vector loops (Note [Binary kernels in AVX2]).
template <class T>
constexpr bool kVecFloating = std::is_same_v<T, float> || std::is_same_v<T, double>;

// Note [Same-shape fast path]
// The functional add, sub and mul of two contiguous CPU tensors of one dtype and one shape: what
// TensorIterator::binary_op would decide is known in advance (that dtype, those sizes, a new
// contiguous output, nothing to convert or broadcast), so the kernel makes the same checks
// (common::check_add and friends) and runs one flat loop without building an iterator, which is
// about 40% of a small add's time. Each operator's element function is written once and run by
// either: `run(op, vec)` below is IterRun (over an iterator) or DenseRun.
bool same_shape_dense(const Tensor& a, const Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.is_cpu() && b.is_cpu() &&
         a.sizes().equals(b.sizes()) && a.is_contiguous() && b.is_contiguous();
}

// The vector loop of `op` for T, null for the dtypes without one (Note [Binary kernels in
// AVX2]).
template <class T>
cpu::vec::BinaryArrayFn<T> vec_for(BinaryVecOp op) {
  if constexpr (kVecFloating<T>) {
    return vec_binary<T>(op);
  } else {
    return nullptr;
  }
}

// out[i] = op(a[i], b[i]) over new dense `out`, by `vec` where not null, split across the pool
// when large.
struct DenseRun {
  const Tensor& out;
  const Tensor& a;
  const Tensor& b;
  template <class Op, class T>
  void operator()(const Op& op, cpu::vec::BinaryArrayFn<T> vec) const {
    T* o = static_cast<T*>(out.data_ptr());
    const T* x = static_cast<const T*>(a.data_ptr());
    const T* y = static_cast<const T*>(b.data_ptr());
    auto loop = [&](int64_t begin, int64_t end) {
      if (vec != nullptr) return vec(x + begin, 1, y + begin, 1, o + begin, end - begin);
      for (int64_t i = begin; i < end; ++i) o[i] = op(x[i], y[i]);
    };
    const int64_t n = out.numel();
    if (n <= common::kGrainSize) {
      loop(0, n);
    } else {
      cpu::parallel_for(0, n, common::kGrainSize, loop);
    }
  }
};

// add and sub (sub adds -alpha). Bool arithmetic is logical: true + true is true. Half and
// BFloat16 compute in float (opmath_t) and round once, as PyTorch does. `run(op, vec)` runs the
// element function op, or the vector loop vec where not null.
template <class Run>
void add_ops(ScalarType dtype, const Scalar& alpha, const char* name, const Run& run) {
  OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(kBool, kHalf, kBFloat16, dtype, name, [&] {
    using opmath = opmath_t<scalar_t>;
    const auto a = common::scalar_to<opmath>(alpha);
    if (a == opmath(1)) {
      run([](scalar_t x,
             scalar_t y) -> scalar_t { return static_cast<scalar_t>(opmath(x) + opmath(y)); },
          vec_for<scalar_t>(BinaryVecOp::Add));
      return;
    }
    if constexpr (kVecFloating<scalar_t>) {
      if (a == opmath(-1)) {  // sub: x + -1 * y is x - y exactly
        run([](scalar_t x, scalar_t y) -> scalar_t { return x - y; },
            vec_for<scalar_t>(BinaryVecOp::Sub));
        return;
      }
    }
    run([a](scalar_t x,
            scalar_t y) -> scalar_t { return static_cast<scalar_t>(opmath(x) + a * opmath(y)); },
        cpu::vec::BinaryArrayFn<scalar_t>{nullptr});
  });
}

// run(op, vec) over an iterator.
struct IterRun {
  const TensorIterator& iter;
  template <class Op, class T>
  void operator()(const Op& op, cpu::vec::BinaryArrayFn<T> vec) const {
    cpu_binary_kernel_vec<T>(iter, op, vec);
  }
};

void add_kernel(const TensorIterator& iter, const Scalar& alpha, const char* name = "add_cpu") {
  add_ops(iter.common_dtype(), alpha, name, IterRun{iter});
}

// add / sub (alpha already negated) on the fast path. REQUIRES: same_shape_dense(self, other).
Tensor dense_add(const Tensor& self, const Tensor& other, const Scalar& alpha, const char* name) {
  Tensor out = cpu::empty_cpu(self.sizes(), self.scalar_type());
  add_ops(self.scalar_type(), alpha, name, DenseRun{out, self, other});
  return out;
}

// Bool multiplication is logical and.
template <class T>
T multiply(T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    return x && y;
  } else {
    return static_cast<T>(opmath_t<T>(x) * opmath_t<T>(y));
  }
}

template <class Run>
void mul_ops(ScalarType dtype, const Run& run) {
  OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(kBool, kHalf, kBFloat16, dtype, "mul_cpu", [&] {
    run([](scalar_t x, scalar_t y) -> scalar_t { return multiply(x, y); },
        vec_for<scalar_t>(BinaryVecOp::Mul));
  });
}

using common::powi;

void pow_tensor_scalar_kernel(const TensorIterator& iter, const Scalar& exponent) {
  // x^0 is 1 and x^1 is x for every dtype, NaN included.
  if (common::pow_is_trivial(exponent)) {
    const bool one = exponent.to_double() == 1;
    OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(
        kBool, kHalf, kBFloat16, iter.common_dtype(), "pow", [&] {
          if (one) {
            cpu_kernel(iter, [](scalar_t x) -> scalar_t { return x; });
          } else {
            cpu_kernel(iter, [](scalar_t) -> scalar_t { return scalar_t(1); });
          }
        });
    return;
  }
  const ScalarType dtype = iter.common_dtype();
  if (is_integral(dtype, /*include_bool=*/false)) {
    OPD_DISPATCH_INTEGRAL_TYPES(dtype, "pow", [&] {
      const auto e = exponent.to<scalar_t>();
      cpu_kernel(iter, [e](scalar_t x) -> scalar_t { return powi(x, e); });
    });
    return;
  }
  OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(kHalf, kBFloat16, dtype, "pow", [&] {
    using opmath = opmath_t<scalar_t>;
    // out = f(x), computed in opmath.
    const auto unary = [&](auto f) {
      cpu_kernel(iter, [f](scalar_t x) -> scalar_t { return static_cast<scalar_t>(f(opmath(x))); });
    };
    if (exponent.is_complex()) {
      const auto c = common::scalar_to<opmath>(exponent);
      unary([c](opmath x) { return std::pow(x, c); });
      return;
    }
    const double e = exponent.to_double();
    // The common exponents as the cheaper, as exact or more exact, operations.
    if (e == 2) {
      unary([](opmath x) { return x * x; });
    } else if (e == 3) {
      unary([](opmath x) { return x * x * x; });
    } else if (e == 0.5) {
      unary([](opmath x) { return std::sqrt(x); });
    } else if (e == -0.5) {
      unary([](opmath x) { return opmath(1) / std::sqrt(x); });
    } else if (e == -1) {
      unary([](opmath x) { return opmath(1) / x; });
    } else if (e == -2) {
      unary([](opmath x) { return opmath(1) / (x * x); });
    } else {
      const auto typed = static_cast<opmath>(e);
      unary([typed](opmath x) { return std::pow(x, typed); });
    }
  });
}

void pow_tensor_tensor_kernel(const TensorIterator& iter) {
  const ScalarType dtype = iter.common_dtype();
  if (is_integral(dtype, /*include_bool=*/false)) {
    OPD_DISPATCH_INTEGRAL_TYPES(dtype, "pow", [&] {
      cpu_kernel(iter, [](scalar_t x, scalar_t e) -> scalar_t { return powi(x, e); });
    });
    return;
  }
  OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(kHalf, kBFloat16, dtype, "pow", [&] {
    using opmath = opmath_t<scalar_t>;
    const auto op = [](scalar_t x, scalar_t e) -> scalar_t {
      return static_cast<scalar_t>(std::pow(opmath(x), opmath(e)));
    };
    if constexpr (kVecFloating<scalar_t>) {
      cpu_binary_kernel_vec<scalar_t>(iter, op, vec_binary<scalar_t>(BinaryVecOp::Pow));
    } else {
      cpu_kernel(iter, op);
    }
  });
}

// maximum / minimum propagate NaN, unlike std::max.
template <bool kMax>
void min_max_kernel(const TensorIterator& iter, const char* name) {
  OPD_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16, iter.common_dtype(), name, [&] {
    const auto op = [](scalar_t a, scalar_t b) -> scalar_t {
      if constexpr (common::kIsFloatingOrComplex<scalar_t>) {
        using opmath = opmath_t<scalar_t>;
        if (opmath(a) != opmath(a)) return a;
        if (opmath(b) != opmath(b)) return b;
      }
      if constexpr (kMax) {
        return a < b ? b : a;
      } else {
        return b < a ? b : a;
      }
    };
    if constexpr (kVecFloating<scalar_t>) {
      const auto vec_op = kMax ? BinaryVecOp::Maximum : BinaryVecOp::Minimum;
      cpu_binary_kernel_vec<scalar_t>(iter, op, vec_binary<scalar_t>(vec_op));
    } else {
      cpu_kernel(iter, op);
    }
  });
}

}  // namespace

// The structured impls (Note [Structured kernels] in tools/gen/structured.h): opd-gen writes
// the out=, in-place and functional kernels around them, but for the functional add, sub and
// mul below, which take the same-shape fast path first.
void add_out(const TensorIterator& iter, const Tensor&, const Tensor&, const Scalar& alpha) {
  add_kernel(iter, alpha);
}
void sub_out(const TensorIterator& iter, const Tensor&, const Tensor&, const Scalar& alpha) {
  add_kernel(iter, common::negated(alpha), "sub_cpu");
}
void mul_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  mul_ops(iter.common_dtype(), IterRun{iter});
}
void div_out(const TensorIterator& iter, const Tensor&, const Tensor&) {
  OPD_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(
      kHalf, kBFloat16, iter.common_dtype(), "div_true_cpu", [&] {
        using opmath = opmath_t<scalar_t>;
        const auto op = [](scalar_t x, scalar_t y) -> scalar_t {
          return static_cast<scalar_t>(opmath(x) / opmath(y));
        };
        if constexpr (kVecFloating<scalar_t>) {
          cpu_binary_kernel_vec<scalar_t>(iter, op, vec_binary<scalar_t>(BinaryVecOp::Div));
        } else {
          cpu_kernel(iter, op);
        }
      });
}

Tensor add_Tensor(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  if (same_shape_dense(self, other)) {
    common::check_add(self.device(), self.scalar_type(), alpha);
    return dense_add(self, other, alpha, "add_cpu");
  }
  TensorIterator iter = meta::add(Tensor(), self, other, alpha);
  add_out(iter, self, other, alpha);
  return std::move(iter).output();
}

Tensor sub_Tensor(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  if (same_shape_dense(self, other)) {
    common::check_sub_operands(self, other);
    common::check_sub(self.device(), self.scalar_type(), alpha);
    return dense_add(self, other, common::negated(alpha), "sub_cpu");
  }
  TensorIterator iter = meta::sub(Tensor(), self, other, alpha);
  sub_out(iter, self, other, alpha);
  return std::move(iter).output();
}

Tensor mul_Tensor(const Tensor& self, const Tensor& other) {
  if (same_shape_dense(self, other)) {
    common::check_mul(self.device(), self.scalar_type());
    Tensor out = cpu::empty_cpu(self.sizes(), self.scalar_type());
    mul_ops(self.scalar_type(), DenseRun{out, self, other});
    return out;
  }
  TensorIterator iter = meta::mul(Tensor(), self, other);
  mul_out(iter, self, other);
  return std::move(iter).output();
}

Tensor pow_Tensor_Scalar(const Tensor& self, const Scalar& exponent) {
  TensorIterator iter = common::pow_meta(Tensor(), self, exponent);
  pow_tensor_scalar_kernel(iter, exponent);
  return std::move(iter).output();
}

Tensor pow_Tensor_Tensor(const Tensor& self, const Tensor& exponent) {
  TensorIterator iter = common::pow_meta(Tensor(), self, exponent);
  pow_tensor_tensor_kernel(iter);
  return std::move(iter).output();
}

Tensor maximum(const Tensor& self, const Tensor& other) {
  TensorIterator iter = common::min_max_meta("maximum", Tensor(), self, other);
  min_max_kernel<true>(iter, "maximum_cpu");
  return std::move(iter).output();
}

Tensor minimum(const Tensor& self, const Tensor& other) {
  TensorIterator iter = common::min_max_meta("minimum", Tensor(), self, other);
  min_max_kernel<false>(iter, "minimum_cpu");
  return std::move(iter).output();
}

Tensor where_self(const Tensor& condition, const Tensor& self, const Tensor& other) {
  TensorIterator iter = common::where_meta(Tensor(), condition, self, other);
  OPD_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(kBool, kHalf, kBFloat16, iter.dtype(), "where_cpu", [&] {
    cpu_kernel(iter, [](bool c, scalar_t a, scalar_t b) -> scalar_t { return c ? a : b; });
  });
  return std::move(iter).output();
}

}  // namespace opd::native
