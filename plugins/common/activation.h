#pragma once

// The metadata steps of the activation functions (Operators II), shared by the CPU and Meta
// kernels so that both raise the same errors (Note [Dtype checks in the metadata step]). The
// structured groups' meta functions (silu, elu, glu...) are in activation_meta.cpp and declared
// in the generated opd/native/meta_functions.h; these are for the kernels that are not.

#include <string_view>
#include <utility>

#include "common/tensor_iterator.h"
#include "common/type_dispatch.h"
#include "opd/scalar.h"
#include "opd/tensor.h"

namespace opd::common {

// PyTorch 1.13's CPU activation kernels: float, double and bfloat16 (computed in float).
inline constexpr TypeSet kActivationTypes = TypeSet::Floating.with(kBFloat16);

// self -> out of self's dtype (integers are not promoted), over the kernel `kernel`'s `types`.
TensorIterator activation_meta(std::string_view name, std::string_view kernel, const Tensor& out,
                               const Tensor& self, TypeSet types = kActivationTypes);
// (grad_output, self) -> out, promoted to their common dtype, over `kernel`'s `types`.
TensorIterator activation_backward_meta(std::string_view name, std::string_view kernel,
                                        const Tensor& out, const Tensor& grad_output,
                                        const Tensor& self, TypeSet types = kActivationTypes);

// hardtanh_backward: float and double only ("hardshrink_backward_cpu", the kernel PyTorch 1.13
// shares with hardshrink).
TensorIterator hardtanh_backward_meta(const Tensor& out, const Tensor& grad_output,
                                      const Tensor& self);

// log_sigmoid_forward: an output or the buffer, contiguous whatever self's layout (as PyTorch's
// log_sigmoid_forward_cpu makes them), after checking self's dtype; the iterator writing
// `buffer` (exp(-|self|)) from self, and the one writing `output` from (self, buffer). The
// iterators keep a pointer to the output: it must outlive them.
Tensor log_sigmoid_forward_output(const Tensor& self);
TensorIterator log_sigmoid_buffer_meta(const Tensor& buffer, const Tensor& self);
TensorIterator log_sigmoid_output_meta(const Tensor& output, const Tensor& self,
                                       const Tensor& buffer);

// log_sigmoid_backward: (self, buffer, grad_output) promoted, over the forward's dtypes.
TensorIterator log_sigmoid_backward_meta(const Tensor& out, const Tensor& grad_output,
                                         const Tensor& self, const Tensor& buffer);

// glu: the two halves of self along `dim` ("Halving dimension must be even, but dimension 1 is
// size 3"; "glu does not support 0-dimensional tensors"), and the wrapped dim.
struct GluHalves {
  Tensor first, second;
  int64_t dim;
};
GluHalves glu_halves(const Tensor& self, int64_t dim);

// In-place leaky_relu_/elu_ keep their result, which cannot be inverted with a negative slope:
// PyTorch's errors for a backward through them.
void check_leaky_relu_backward(const Scalar& negative_slope, bool self_is_result);
void check_elu_backward(const Scalar& alpha, bool is_result);

}  // namespace opd::common
