#pragma once

// What the host side of softmax, log_softmax, their backward and nll_loss (softmax_kernels.cpp,
// loss_kernels.cpp) hands their device code (kernels/softmax.cu, kernels/loss.cu). Conventions as
// kernels/kernel_args.h: no opd header, raw pointers, launch functions that return the CUDA error
// of the launch. Strides here count elements, not bytes.

#include <cstdint>

#include "cuda/kernels/kernel_args.h"

namespace opd::cuda::kern {

// ---- softmax ------------------------------------------------------------------------------------

// Softmax over the middle dim of contiguous [outer, dim_size, inner] tensors: lane (o, j) is the
// dim_size elements (o * dim_size + k) * inner + j. Computes in float (double for Float64),
// subtracting each lane's maximum (NaN if the lane holds one) before exp.
struct SoftmaxArgs {
  Dtype dtype = Dtype::Float32;      // the input's: Float16, BFloat16, Float32 or Float64
  Dtype out_dtype = Dtype::Float32;  // dtype, or Float32 for a Float16 input (half_to_float)
  bool log = false;                  // log_softmax
  const void* input = nullptr;
  void* output = nullptr;
  int64_t outer = 1, dim_size = 1, inner = 1;
};

// REQUIRES: outer * dim_size * inner > 0.
int launch_softmax(const SoftmaxArgs& args, Stream stream);

// softmax: grad_input = y * (g - sum(g * y)); log_softmax: grad_input = g - exp(y) * sum(g), sums
// over each lane; g = grad_output, y = output, all laid out as SoftmaxArgs.
struct SoftmaxBackwardArgs {
  Dtype dtype = Dtype::Float32;      // grad_output's and output's
  Dtype out_dtype = Dtype::Float32;  // dtype, or Float16 for a Float32 grad of a half_to_float op
  bool log = false;
  const void* grad_output = nullptr;
  const void* output = nullptr;
  void* grad_input = nullptr;
  int64_t outer = 1, dim_size = 1, inner = 1;
};

// REQUIRES: outer * dim_size * inner > 0.
int launch_softmax_backward(const SoftmaxBackwardArgs& args, Stream stream);

// ---- nll_loss -----------------------------------------------------------------------------------

// common::Reduction's values.
enum class NllReduction : int8_t { None = 0, Mean = 1, Sum = 2 };

// NllLossArgs::bad_sample while no target was out of range: the launch functions memset it to
// bytes 0x7F, above any sample index.
inline constexpr int64_t kNoBadSample = 0x7F7F7F7F7F7F7F7F;

// The inputs of nll_loss_forward and nll_loss_backward, read through their strides.
struct NllLossArgs {
  Dtype dtype = Dtype::Float32;       // input's, weight's (and grad_output's, total_weight's)
  Dtype target_dtype = Dtype::Int64;  // Int64 or UInt8
  NllReduction reduction = NllReduction::Mean;
  // A 2-D input [batch, n_classes]; with Reduction None it has one loss per sample ("per sample").
  bool batched = false;
  const void* input = nullptr;
  int64_t input_sample_stride = 0, input_class_stride = 1;  // sample stride 0 for a 1-D input
  const void* target = nullptr;
  int64_t target_stride = 0;
  const void* weight = nullptr;  // null: every class weighs 1
  int64_t weight_stride = 0;
  int64_t batch = 0;  // samples to read (0 for an empty target)
  int64_t n_classes = 0;
  int64_t ignore_index = -100;
  // One int64 of device memory: the launch sets it to kNoBadSample, and the kernel lowers it to
  // the smallest sample whose target is neither ignore_index nor in [0, n_classes).
  int64_t* bad_sample = nullptr;
};

// output: per sample, [batch] losses -weight[c] * input[i, c] (0 for an ignored sample); else one
// loss, their sum (for Mean over the total weight: NaN for an empty batch). total_weight: the
// weights of the samples not ignored, summed (0 per sample). Both contiguous, in `dtype`.
int launch_nll_loss_forward(const NllLossArgs& args, void* output, void* total_weight,
                            Stream stream);

// grad_input (contiguous, self's sizes, grad_input_numel elements) is zeroed, then sample i of
// class c gets -weight[c] * g, g = grad_output[i * grad_output_stride] per sample, else
// grad_output[0] (over total_weight[0] for Mean).
int launch_nll_loss_backward(const NllLossArgs& args, const void* grad_output,
                             int64_t grad_output_stride, const void* total_weight, void* grad_input,
                             int64_t grad_input_numel, Stream stream);

}  // namespace opd::cuda::kern
