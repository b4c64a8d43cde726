// The arithmetic, comparison and selection kernels: one functor per operator family, each
// switching on its operator (a uniform branch, cheap beside the memory traffic), instantiated
// for the dtypes the host side lets through (common/elementwise.h's checks).

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common/powi.h"
#include "cuda/kernels/kernel_args.h"
#include "cuda/kernels/loops.cuh"

namespace opd::cuda::kern {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kGeluKappa = 0.044715;

using common::powi;

template <class A>
__device__ A gelu(A x, bool tanh_form) {
  if (tanh_form) {
    const A inner = A(kSqrt2OverPi) * (x + A(kGeluKappa) * x * x * x);
    return A(0.5) * x * (A(1) + tanh(inner));
  }
  return x * A(0.5) * (A(1) + erf(x * A(kSqrt1_2)));
}

template <class A>
__device__ A gelu_grad(A x, bool tanh_form) {
  if (tanh_form) {
    const A x_sq = x * x;
    const A t = tanh(A(kSqrt2OverPi) * (x + A(kGeluKappa) * x_sq * x));
    const A du_dx = A(kSqrt2OverPi) * (A(1) + A(3) * A(kGeluKappa) * x_sq);
    return A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * du_dx;
  }
  const A cdf = A(0.5) * (A(1) + erf(x * A(kSqrt1_2)));
  const A pdf = A(kInvSqrt2Pi) * exp(A(-0.5) * x * x);
  return cdf + x * pdf;
}

template <class T>
struct UnaryFn {
  UnaryOp op;
  acc_t<T> a, b;
  bool has_a, has_b;

  __device__ T operator()(T in) const {
    using A = acc_t<T>;
    const A x = to_acc(in);
    if constexpr (std::is_same_v<T, bool>) {
      return op == UnaryOp::One ? true : in;
    } else if constexpr (kIsFloat<T>) {
      switch (op) {
        case UnaryOp::Neg:
          return cast_to<T>(-x);
        case UnaryOp::Abs:
          return cast_to<T>(fabs(x));
        case UnaryOp::Exp:
          return cast_to<T>(exp(x));
        case UnaryOp::Log:
          return cast_to<T>(log(x));
        case UnaryOp::Sqrt:
          return cast_to<T>(sqrt(x));
        case UnaryOp::Rsqrt:
          return cast_to<T>(A(1) / sqrt(x));
        case UnaryOp::Sin:
          return cast_to<T>(sin(x));
        case UnaryOp::Cos:
          return cast_to<T>(cos(x));
        case UnaryOp::Tanh:
          return cast_to<T>(tanh(x));
        case UnaryOp::Sigmoid:
          return cast_to<T>(A(1) / (A(1) + exp(-x)));
        case UnaryOp::Relu:
          return x < A(0) ? cast_to<T>(0) : in;  // keeps NaN
        case UnaryOp::Gelu:
          return cast_to<T>(gelu(x, false));
        case UnaryOp::GeluTanh:
          return cast_to<T>(gelu(x, true));
        case UnaryOp::Clamp: {
          A v = x;  // NaN stays NaN; min > max gives max
          if (has_a) v = v < a ? a : v;
          if (has_b) v = b < v ? b : v;
          return cast_to<T>(v);
        }
        case UnaryOp::PowScalar:
          if (a == A(2)) return cast_to<T>(x * x);
          if (a == A(3)) return cast_to<T>(x * x * x);
          if (a == A(0.5)) return cast_to<T>(sqrt(x));
          if (a == A(-0.5)) return cast_to<T>(A(1) / sqrt(x));
          if (a == A(-1)) return cast_to<T>(A(1) / x);
          if (a == A(-2)) return cast_to<T>(A(1) / (x * x));
          return cast_to<T>(pow(x, a));
        case UnaryOp::Identity:
          return in;
        case UnaryOp::One:
          return cast_to<T>(1);
      }
      return in;
    } else {
      switch (op) {
        case UnaryOp::Neg:
          return static_cast<T>(-x);
        case UnaryOp::Abs:
          if constexpr (std::is_unsigned_v<T>) {
            return x;
          } else {
            return x < 0 ? static_cast<T>(-x) : x;
          }
        case UnaryOp::Relu:
          if constexpr (std::is_unsigned_v<T>) {
            return x;
          } else {
            return x < T(0) ? T(0) : x;
          }
        case UnaryOp::Clamp: {
          T v = x;
          if (has_a) v = v < a ? a : v;
          if (has_b) v = b < v ? b : v;
          return v;
        }
        case UnaryOp::PowScalar:
          return powi(x, a);
        case UnaryOp::One:
          return T(1);
        default:
          return in;
      }
    }
  }
};

template <class T>
struct BinaryFn {
  BinaryOp op;
  acc_t<T> a;

  __device__ T operator()(T in_x, T in_y) const {
    using A = acc_t<T>;
    const A x = to_acc(in_x), y = to_acc(in_y);
    if constexpr (std::is_same_v<T, bool>) {
      switch (op) {
        case BinaryOp::Add:
          return x || (a && y);  // logical, as true + true is true
        case BinaryOp::Mul:
          return x && y;
        case BinaryOp::Maximum:
          return x || y;
        case BinaryOp::Minimum:
          return x && y;
        default:
          return x;
      }
    } else {
      switch (op) {
        case BinaryOp::Add:
          return cast_to<T>(a == A(1) ? x + y : x + a * y);
        case BinaryOp::Mul:
          return cast_to<T>(x * y);
        case BinaryOp::Div:
          return cast_to<T>(x / y);
        case BinaryOp::Pow:
          if constexpr (kIsFloat<T>) {
            return cast_to<T>(pow(x, y));
          } else {
            return powi(in_x, in_y);
          }
        case BinaryOp::Maximum:
        case BinaryOp::Minimum: {
          if constexpr (kIsFloat<T>) {
            if (x != x || y != y) return cast_to<T>(NAN);  // NaN propagates
          }
          const bool take_y = op == BinaryOp::Maximum ? x < y : y < x;
          return take_y ? in_y : in_x;
        }
        case BinaryOp::ThresholdBackward:
          return x <= a ? cast_to<T>(0) : in_y;  // (self, grad)
        case BinaryOp::SigmoidBackward:
          if constexpr (kIsFloat<T>) return cast_to<T>(x * (A(1) - y) * y);
          break;
        case BinaryOp::TanhBackward:
          if constexpr (kIsFloat<T>) return cast_to<T>(x * (A(1) - y * y));
          break;
        case BinaryOp::GeluBackward:
          if constexpr (kIsFloat<T>) return cast_to<T>(x * gelu_grad(y, false));
          break;
        case BinaryOp::GeluTanhBackward:
          if constexpr (kIsFloat<T>) return cast_to<T>(x * gelu_grad(y, true));
          break;
      }
      return in_x;
    }
  }
};

template <class T>
struct CompareFn {
  CompareOp op;
  __device__ bool operator()(T in_x, T in_y) const {
    const acc_t<T> x = to_acc(in_x), y = to_acc(in_y);
    switch (op) {
      case CompareOp::Eq:
        return x == y;
      case CompareOp::Ne:
        return x != y;
      case CompareOp::Lt:
        return x < y;
      case CompareOp::Le:
        return x <= y;
      case CompareOp::Gt:
        return x > y;
      case CompareOp::Ge:
        return x >= y;
    }
    return false;
  }
};

template <class T>
struct WhereFn {
  __device__ T operator()(bool c, T x, T y) const { return c ? x : y; }
};

}  // namespace

int launch_unary(UnaryOp op, Dtype dtype, const Geometry& g, ScalarArg a, ScalarArg b,
                 Stream stream) {
  return visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    UnaryFn<T> f{op, scalar_as<acc_t<T>>(a), scalar_as<acc_t<T>>(b), a.is_set, b.is_set};
    return launch_elementwise<T, T>(g, f, stream);
  });
}

int launch_binary(BinaryOp op, Dtype dtype, const Geometry& g, ScalarArg a, Stream stream) {
  return visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    // alpha in the arithmetic type, as PyTorch's opmath; the threshold in the element type, as
    // the CPU's threshold.to<scalar_t>() (it differs for Half and BFloat16 only).
    const acc_t<T> arg =
        op == BinaryOp::ThresholdBackward ? to_acc(scalar_as<T>(a)) : scalar_as<acc_t<T>>(a);
    BinaryFn<T> f{op, arg};
    return launch_elementwise<T, T, T>(g, f, stream);
  });
}

int launch_compare(CompareOp op, Dtype dtype, const Geometry& g, Stream stream) {
  return visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    return launch_elementwise<bool, T, T>(g, CompareFn<T>{op}, stream);
  });
}

int launch_where(Dtype dtype, const Geometry& g, Stream stream) {
  return visit(dtype, [&](auto tag) {
    using T = decltype(tag);
    return launch_elementwise<T, bool, T, T>(g, WhereFn<T>{}, stream);
  });
}

}  // namespace opd::cuda::kern
