#pragma once

// batch_norm, layer_norm and group_norm: the checks, result shapes and dtypes the CPU and Meta
// kernels share, in PyTorch 1.13's words. Statistics (mean, rstd/invstd) have the input's dtype,
// as PyTorch's CPU kernels give them; bfloat16 computes in float.

#include <optional>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// ---- layer_norm ---------------------------------------------------------------------------------

struct LayerNormMeta {
  int64_t M = 1;                    // rows: the product of the leading (not normalised) sizes
  int64_t N = 1;                    // row length: the product of normalized_shape
  std::vector<int64_t> stat_sizes;  // mean/rstd: the leading sizes, then a 1 per normalised dim
};

// PyTorch's _check_layer_norm_inputs and the dtype check of LayerNormKernelImpl (float, double,
// bfloat16).
LayerNormMeta layer_norm_meta(const Tensor& input, IntArrayRef normalized_shape,
                              const std::optional<Tensor>& weight,
                              const std::optional<Tensor>& bias);

// ---- group_norm ---------------------------------------------------------------------------------

// PyTorch's native_group_norm checks: channels divisible by groups, weight/bias of C elements,
// N * C * HxW elements; dtype check of GroupNormKernelImpl.
void check_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                      const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW,
                      int64_t group);

// ---- batch_norm ---------------------------------------------------------------------------------

// Checks of native_batch_norm: rank >= 2 (IndexError as PyTorch's size(1)), the dtype (float,
// double, bfloat16: "\"batch_norm\" not implemented for ..."), weight/bias/running stats of C
// elements ("running_mean should contain 3 elements not 4"), running stats in eval mode.
// Returns C.
int64_t check_batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                         const std::optional<Tensor>& bias,
                         const std::optional<Tensor>& running_mean,
                         const std::optional<Tensor>& running_var, bool training);

// The per-channel checks the composite batch_norm makes (PyTorch's _batch_norm_impl_index):
// "running_mean should contain 3 elements not 4" for each of the four optional tensors.
void check_batch_norm_features(const Tensor& input, const std::optional<Tensor>& weight,
                               const std::optional<Tensor>& bias,
                               const std::optional<Tensor>& running_mean,
                               const std::optional<Tensor>& running_var);

// The memory format the output of batch_norm/group_norm takes: ChannelsLast(3d) when the input
// is laid out so, else Contiguous (PyTorch's suggest_memory_format).
MemoryFormat norm_memory_format(const Tensor& input);

}  // namespace opd::common
