#pragma once

// cat, softmax and nll_loss: the checks, result shapes and dtypes every backend shares. Results
// are contiguous, on the inputs' device.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// ---- cat ----------------------------------------------------------------------------------------

// A 1-D tensor of size 0: cat skips it whatever the other shapes (PyTorch's legacy behaviour).
inline bool cat_should_skip(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

struct CatMeta {
  int64_t dim = 0;  // wrapped against the first tensor that is not skipped
  std::vector<int64_t> sizes;
  ScalarType dtype = ScalarType::Undefined;  // result_type of the inputs
};

// Throws Error "torch.cat(): expected a non-empty list of Tensors", "zero-dimensional tensor (at
// position 0) cannot be concatenated", "Tensors must have same number of dimensions: got 2 and
// 3", "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for
// tensor number 1 in the list.", IndexError from wrapping `dim`, and check_same_device's error.
// When every tensor is skipped the result is [0] (a 1-D empty tensor).
CatMeta cat_meta(TensorList tensors, int64_t dim);

// ---- softmax ------------------------------------------------------------------------------------

// _softmax / _log_softmax (`op` names the operator in errors). Returns the wrapped dim (0 for a
// 0-dim input). The result has the input's sizes, in Float when half_to_float, else the input's
// dtype, which must be floating: Error "\"_softmax\" not implemented for 'Long'".
// half_to_float needs a Half input: Error "conversion is supported for Half type only".
int64_t softmax_meta(const char* op, const Tensor& self, int64_t dim, bool half_to_float,
                     ScalarType* out_dtype);

// _softmax_backward_data / _log_softmax_backward_data; `check_name` is "softmax_backward" or
// "log_softmax_backward". Returns the wrapped dim. Throws Error "Expected tensor for argument #1
// 'grad' to have same size as tensor for argument #2 'output'; but [2, 3] does not equal [3, 3]
// (while checking arguments for softmax_backward)", "expected scalar type Float but found
// Double" (grad_output and output), Error for non-floating types. The result has grad's sizes
// and dtype (Half when grad is Float and input_dtype Half, as PyTorch).
int64_t softmax_backward_meta(const char* op, const char* check_name, const Tensor& grad,
                              const Tensor& output, int64_t dim, ScalarType input_dtype,
                              ScalarType* out_dtype);

// ---- nll_loss -----------------------------------------------------------------------------------

// PyTorch's at::Reduction::Reduction, the `int reduction` of the loss schemas.
enum class Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };

// Checks `reduction` is one of the three; Error "nll_loss_forward: reduction must be 0 (none),
// 1 (mean) or 2 (sum), got 3" otherwise.
Reduction to_reduction(const char* op, int64_t reduction);

struct NllLossMeta {
  std::vector<int64_t> output_sizes;  // [batch] for Reduction::None on a 2-D input, else []
  int64_t batch_size = 1;             // 1 for a 1-D input
  int64_t n_classes = 0;
  Reduction reduction = Reduction::Mean;
};

// nll_loss_forward. Outputs: `output` of output_sizes and `total_weight` of [], both in self's
// dtype. Throws Error "input tensor should be 1D or 2D", "0D or 1D target tensor expected,
// multi-target not supported", "size mismatch (got input: [3, 5], target: [2])", "weight tensor
// should be defined either for all 5 classes or no classes but got weight tensor of shape: [4]",
// "expected scalar type Long but found Int" (target: Long or Byte), "expected scalar type Float
// but found Double" (weight), Error for a non-floating input, check_same_device's error.
// Targets out of range ("Target 5 is out of bounds.", IndexError) are found by the kernel.
NllLossMeta nll_loss_forward_meta(const Tensor& self, const Tensor& target,
                                  const std::optional<Tensor>& weight, int64_t reduction);

// nll_loss_backward: the forward's checks, then Error "expected total_weight to be a  single
// element tensor, got: [2] (2 elements)", "Expected a single element grad_output tensor, but
// got: [3]", or for Reduction::None on a 2-D input "Expected a tensor of dimension 1 and
// tensor.size[0] == 3 but got: dimension 2 and tensor.size[0] == 3". The result has self's
// sizes and dtype.
NllLossMeta nll_loss_backward_meta(const Tensor& grad_output, const Tensor& self,
                                   const Tensor& target, const std::optional<Tensor>& weight,
                                   int64_t reduction, const Tensor& total_weight);

// The check nll_loss (the composite) makes before it calls nll_loss_forward, as PyTorch's
// nll_loss_nd: ValueError "Expected 1 or more dimensions (got 0)", and "Expected input
// batch_size (3) to match target batch_size (2)." when a batched input and its target disagree.
void check_nll_loss_batch(const Tensor& self, const Tensor& target);

// ---- embedding ----------------------------------------------------------------------------------

// PyTorch's checkScalarTypes for an index argument: Error "Expected tensor for argument #1
// 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor
// instead (while checking arguments for embedding)", with `position` and `op` as given.
void check_indices_long_or_int(const Tensor& indices, int position, std::string_view op);

// embedding_renorm_'s checks, as PyTorch's checkDim and checkScalarTypes word them: "Expected
// 2-dimensional tensor, but got 1-dimensional tensor for argument #1 'self' (while checking
// arguments for embedding_renorm_)", "Expected tensor for argument #2 'indices' to have one of
// the following scalar types: Long, Int; but got torch.FloatTensor instead (...)"; and, when
// there are indices (rows to renormalise), norm()'s "input dtype should be either floating point
// or complex. Got Long instead.". Index values are the kernel's to check (data).
void embedding_renorm_check(const Tensor& self, const Tensor& indices);

}  // namespace opd::common
