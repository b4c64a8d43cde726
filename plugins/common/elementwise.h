#pragma once

// The metadata step of every elementwise operator: its own checks (PyTorch's meta functions),
// then a built TensorIterator. The CPU and Meta kernels (and later CUDA's) both call these, so
// that every backend accepts the same arguments and produces the same shapes and dtypes.
//
// `out` in each function is as TensorIteratorConfig::add_output: undefined for the functional
// form, `self` for the in-place form, the out= tensor otherwise. A kernel that computes runs its
// loop over the result and returns iter.output().
//
// Each also makes the checks the CPU kernel's dtype dispatch would
// (see Note [Dtype checks in the metadata step]): Error "\"lt_cpu\" not implemented for
// 'ComplexFloat'" naming the kernel as PyTorch does ("lt_cuda" on a CUDA device), and Error "value
// cannot be converted to type uint8_t without overflow" for a Scalar argument (alpha, a bound, a
// fill value) the compute dtype cannot hold.

#include <optional>
#include <string_view>

#include "common/tensor_iterator.h"
#include "common/type_dispatch.h"
#include "opd/scalar.h"
#include "opd/tensor.h"

namespace opd::common {

// The CPU kernels' dtype sets, PyTorch 1.13's: ordered (maximum, lt), arithmetic (add, mul,
// where, eq), floating and complex (true division, pow of floats).
inline constexpr TypeSet kOrderedTypes = TypeSet::AllAndBool.with(kHalf, kBFloat16);
inline constexpr TypeSet kArithmeticTypes = kOrderedTypes | TypeSet::Complex;
inline constexpr TypeSet kFloatingAndComplexTypes =
    TypeSet::Floating.with(kHalf, kBFloat16) | TypeSet::Complex;
// gelu's and gelu_backward's: BFloat16 but not Half, as PyTorch 1.13's CPU kernels.
inline constexpr TypeSet kGeluTypes = TypeSet::Floating.with(kBFloat16);

// check_dtype_in for the kernel "<op>_cpu", or "<op>_cuda" on a CUDA device, whose sets also
// take Half and BFloat16 wherever they take floating types (computed in float), as PyTorch's.
void check_kernel_dtype(std::string_view op, const Device& device, ScalarType dtype, TypeSet set);

// -s: sub adds -alpha.
Scalar negated(const Scalar& s);

// add, sub, mul and div are structured (Note [Structured kernels] in tools/gen/structured.h):
// their metadata steps are the meta functions opd::meta::add, sub, mul and div
// (opd/native/meta_functions.h, generated), defined in elementwise.cpp with the checks below.
// add checks alpha against the compute dtype: "Boolean alpha only supported for Boolean
// results.", "For integral input tensors, argument alpha must not be a floating point number.",
// "For non-complex input tensors, argument alpha must not be a complex number."; sub makes
// add's checks after refusing bool operands: "Subtraction, the `-` operator, with two bool
// tensors is not supported. Use the `^` or `logical_xor()` operator instead." and "Subtraction,
// the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use
// the `~` or `logical_not()` operator instead."; div is true division (integral and bool inputs
// compute in Float).
//
// The checks the meta functions of add, sub and mul make once the iterator is built, for a kernel
// that knows the iterator's outcome without building one: two operands of `dtype` on `device` that
// need no broadcasting, promotion or conversion (Note [Same-shape fast path] in the CPU plugin).
// Same errors, same order; sub's operand checks come first, as in opd::meta::sub.
void check_add(const Device& device, ScalarType dtype, const Scalar& alpha);
void check_sub_operands(const Tensor& self, const Tensor& other);
void check_sub(const Device& device, ScalarType dtype, const Scalar& alpha);
void check_mul(const Device& device, ScalarType dtype);
// pow.Tensor_Scalar: computes in result_type(self, exponent), the exponent a wrapped number.
// "Integers to negative integer powers are not allowed."
TensorIterator pow_meta(const Tensor& out, const Tensor& self, const Scalar& exponent);
// Whether pow with this exponent is x^0 = 1 or x^1 = x, which every dtype supports.
bool pow_is_trivial(const Scalar& exponent);
TensorIterator pow_meta(const Tensor& out, const Tensor& self, const Tensor& exponent);
// maximum / minimum (`name`): "maximum not implemented for complex tensors."
TensorIterator min_max_meta(std::string_view name, const Tensor& out, const Tensor& self,
                            const Tensor& other);
// eq, ne, lt, le, gt, ge (`name`): Bool results.
TensorIterator comparison_meta(std::string_view name, const Tensor& out, const Tensor& self,
                               const Tensor& other);
// where.self: inputs (condition, self, other), computing in result_type(self, other).
// "where expected condition to be a boolean tensor, but got a tensor with dtype Float"
TensorIterator where_meta(const Tensor& out, const Tensor& condition, const Tensor& self,
                          const Tensor& other);

// div's rounding_mode: None (true division), "trunc" or "floor"; otherwise Error "div expected
// rounding_mode to be one of None, 'trunc', or 'floor' but found 'x'".
enum class RoundingMode { True, Trunc, Floor };
RoundingMode rounding_mode(std::optional<std::string_view> mode);
// div.Tensor_mode (and floor_divide, which is Floor): true division as div, else binary_op over
// the numeric types with Half and BFloat16 (kernels "div_trunc", "div_floor").
TensorIterator div_mode_meta(const Tensor& out, const Tensor& self, const Tensor& other,
                             RoundingMode mode);
// logical_and, logical_or, logical_xor (`name`): comparison_op over every dtype; Bool results,
// cast into an out= or in-place tensor of another dtype.
TensorIterator logical_meta(std::string_view name, const Tensor& out, const Tensor& self,
                            const Tensor& other);

// neg: "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to
// invert a mask, use the `~` or `logical_not()` operator instead."
TensorIterator neg_meta(const Tensor& out, const Tensor& self);
TensorIterator abs_meta(const Tensor& out, const Tensor& self);
// exp, log, sqrt, rsqrt, sin, cos, tanh, sigmoid (`name`): integral inputs compute in Float.
TensorIterator unary_float_meta(std::string_view name, const Tensor& out, const Tensor& self);
// relu / relu_: "Boolean inputs not supported for relu"
TensorIterator relu_meta(const Tensor& out, const Tensor& self);
// relu and relu_ as PyTorch's CPU kernel computes them: clamp_min with 0, dispatched, so the CPU
// and Meta kernels (torch's `CPU, CUDA` registrations, which the seed article lists) are this one
// function and agree by construction.
Tensor relu(const Tensor& self);
Tensor& relu_(Tensor& self);

enum class GeluApproximation { None, Tanh };
// "none" or "tanh"; otherwise Error "approximate argument must be either none or tanh."
GeluApproximation gelu_approximation(std::string_view approximate);
TensorIterator gelu_meta(const Tensor& out, const Tensor& self, std::string_view approximate);

// clamp: "torch.clamp: At least one of 'min' or 'max' must not be None"; integral and bool
// tensors compute in the promotion of self with the bounds (as wrapped numbers); in place, that
// must be self's dtype: "result type Float can't be cast to the desired output type Long".
// Complex: "clamp is not supported for complex types".
TensorIterator clamp_meta(const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                          const std::optional<Scalar>& max);

// threshold_backward: inputs (self, grad_output), promoted.
TensorIterator threshold_backward_meta(const Tensor& out, const Tensor& grad_output,
                                       const Tensor& self, const Scalar& threshold);
// sigmoid_backward, tanh_backward, gelu_backward (`name`): inputs (grad_output, other), promoted,
// computed by a kernel called `kernel_name` over `types` (gelu_backward's takes BFloat16 too).
TensorIterator pointwise_backward_meta(std::string_view name, std::string_view kernel_name,
                                       const Tensor& out, const Tensor& grad_output,
                                       const Tensor& other, TypeSet types = TypeSet::Floating);

// copy_: `src` broadcast into `self`, any dtype to any dtype, checked for overlap ("unsupported
// operation: ..."), with self's shape fixed ("output with shape [3] doesn't match the broadcast
// shape [2, 3]"). Copying out of a Meta tensor into a tensor with memory is NotImplementedError
// "Cannot copy out of meta tensor; no data!". Returns the iterator of the copy to run, or none
// when there is nothing to move: self is src or the same data, self is on Meta (the copy is
// then only checked), or there are no elements. Devices are not checked otherwise: a kernel
// refuses the pairs it cannot copy between.
std::optional<TensorIterator> copy_meta(const Tensor& self, const Tensor& src);
// fill_: writes every element of self (overlapping elements allowed: filling is idempotent).
TensorIterator fill_meta(const Tensor& self, const Scalar& value);

}  // namespace opd::common
