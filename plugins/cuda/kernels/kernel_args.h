#pragma once

// What the host side of the CUDA plugin hands its device code: plain structs and enums, and the
// launch functions the .cu files define. Nothing here includes an opd header, so nvcc never
// compiles the core's headers (fmt's compile-time format checks are beyond its front end); the
// host .cpp files, compiled by the C++ compiler, do all the metadata work with plugins/common/
// and call these with raw pointers, sizes and byte strides.
//
// Every launch function runs on `stream` of the current device and returns the CUDA error of
// the launch (cudaSuccess as 0), which the caller turns into an opd::Error naming the kernel.

#include <cstdint>

namespace opd::cuda::kern {

// ScalarType's values (opd/scalar_type.h); the host side checks that they agree.
enum class Dtype : int8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  ComplexFloat,  // only the kernels that move, convert or sum values take these (kernel_dtype)
  ComplexDouble,
};

using Stream = void*;  // a cudaStream_t

// Most operands of one elementwise launch (output first) and most dims after merging.
inline constexpr int kMaxOperands = 4;
inline constexpr int kMaxDims = 25;  // PyTorch's MAX_DIMS for its CUDA offset calculator

// An elementwise loop as TensorIterator lays it out: dims fastest first, operand k's byte stride
// along each dim, and its first element's address. Operand 0 is written.
struct Geometry {
  int ndim = 0;
  int ntensors = 0;
  int64_t numel = 0;
  bool contiguous = false;  // every operand dense in the same order: one dim of numel elements
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims][kMaxOperands] = {};
  char* data[kMaxOperands] = {};
  // Inputs passed by value (bit k: operand k): a zero-dim CPU tensor among device operands, as
  // PyTorch passes one. Its element is in inline_values[k], read with stride 0 by the strided
  // kernel (`contiguous` is false then); data[k] is null.
  uint32_t inline_mask = 0;
  alignas(16) unsigned char inline_values[kMaxOperands][16] = {};
};

// A Scalar argument in the two forms a kernel may need; the host fills both. `i` of a floating
// Scalar is its value truncated (0 when no int64 holds it: the metadata step has refused such a
// value for an integer kernel by then).
struct ScalarArg {
  double f = 0;
  double imag = 0;  // the imaginary part of a complex Scalar (`f` is its real part)
  int64_t i = 0;
  bool is_set = false;
  bool is_integral = false;  // an integer or bool Scalar: `i` is its exact value
};

enum class UnaryOp : int8_t {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Relu,
  Gelu,       // erf form
  GeluTanh,   // tanh approximation
  Clamp,      // a = min, b = max (either may be unset)
  PowScalar,  // a = exponent
  Identity,
  One,
};

enum class BinaryOp : int8_t {
  Add,  // x + a * y
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  ThresholdBackward,  // operands (self, grad): self <= a ? 0 : grad
  SigmoidBackward,    // (grad, y): grad * (1 - y) * y
  TanhBackward,       // (grad, y): grad * (1 - y * y)
  GeluBackward,       // (grad, x)
  GeluTanhBackward,   // (grad, x)
};

enum class CompareOp : int8_t { Eq, Ne, Lt, Le, Gt, Ge };

// out = op(in) in `dtype` (every operand of that dtype).
int launch_unary(UnaryOp op, Dtype dtype, const Geometry& g, ScalarArg a, ScalarArg b,
                 Stream stream);
int launch_binary(BinaryOp op, Dtype dtype, const Geometry& g, ScalarArg a, Stream stream);
// out (Bool) = op(x, y), inputs in `dtype`.
int launch_compare(CompareOp op, Dtype dtype, const Geometry& g, Stream stream);
// out = cond ? x : y; cond Bool, the rest in `dtype`.
int launch_where(Dtype dtype, const Geometry& g, Stream stream);
// out (dst) = convert(in (src)), C++ conversions as the CPU's copy_ (to bool: non-zero).
int launch_copy(Dtype dst, Dtype src, const Geometry& g, Stream stream);
// Every element of operand 0 = value.
int launch_fill(Dtype dtype, const Geometry& g, ScalarArg value, Stream stream);

// Dense out[i] = start + i * step, i < n.
int launch_arange(Dtype dtype, void* out, int64_t n, ScalarArg start, ScalarArg step,
                  Stream stream);
// Dense out[i] from Philox element (offset + i) under `seed` (Note [Random numbers per element]):
// uniform in [0, 1) or standard normal.
int launch_random(Dtype dtype, void* out, int64_t n, uint64_t seed, uint64_t offset, bool normal,
                  Stream stream);

}  // namespace opd::cuda::kern
