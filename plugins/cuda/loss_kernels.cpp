// CUDA kernels of nll_loss_forward and nll_loss_backward. Shapes, dtypes and argument errors come
// from common/nn_shape.h, as the CPU's and Meta's do; inputs are read through their strides by
// kernels/loss.cu. Sums accumulate in float (double for Double) where the CPU uses double.
//
// Note [nll_loss target check on CUDA]
// The CPU throws IndexError "Target 5 is out of bounds." for a target that is neither
// ignore_index nor in [0, n_classes); only the data, which is on the device, can tell. PyTorch's
// CUDA kernel fires a device-side assert, which leaves the CUDA context unusable. Here the kernel
// records the first such sample in one int64 of device memory, and the host copies it back after
// the launch and throws the CPU's error, naming that sample's target. The price: every call
// synchronises with its stream (waits for its kernel) before it returns.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <tuple>

#include "common/nn_shape.h"
#include "cuda/allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/geometry.h"
#include "cuda/kernels/nn_args.h"
#include "opd/error.h"
#include "opd/native/CUDA.h"

namespace opd::native {

namespace {

namespace kern = cuda::kern;
using common::NllLossMeta;

static_assert(static_cast<int>(kern::NllReduction::None) ==
              static_cast<int>(common::Reduction::None));
static_assert(static_cast<int>(kern::NllReduction::Mean) ==
              static_cast<int>(common::Reduction::Mean));
static_assert(static_cast<int>(kern::NllReduction::Sum) ==
              static_cast<int>(common::Reduction::Sum));

// The kernel's view of the inputs; `bad_sample` is one Long of device memory.
kern::NllLossArgs make_args(const char* op, const Tensor& self, const Tensor& target,
                            const std::optional<Tensor>& weight, const NllLossMeta& m,
                            int64_t ignore_index, const Tensor& bad_sample) {
  kern::NllLossArgs a;
  a.dtype = cuda::kernel_dtype(self.scalar_type(), op);
  a.target_dtype = cuda::kernel_dtype(target.scalar_type(), op);
  a.reduction = static_cast<kern::NllReduction>(m.reduction);
  a.batched = self.dim() == 2;
  a.input = self.data_ptr();
  a.input_sample_stride = self.dim() == 2 ? self.stride(0) : 0;
  a.input_class_stride = self.stride(-1);
  a.target = target.data_ptr();
  a.target_stride = target.dim() == 1 ? target.stride(0) : 0;
  if (weight && weight->defined()) {
    a.weight = weight->data_ptr();
    a.weight_stride = weight->stride(0);
  }
  a.batch = m.batch_size;
  a.n_classes = m.n_classes;
  a.ignore_index = ignore_index;
  a.bad_sample = bad_sample.data_ptr<int64_t>();
  return a;
}

// Throws the CPU's IndexError when the kernel just queued on `stream` found a target out of range;
// see Note [nll_loss target check on CUDA].
void check_targets(const kern::NllLossArgs& a, const Tensor& target, cudaStream_t stream) {
  int64_t sample = kern::kNoBadSample;
  OPD_CUDA_CHECK(
      cudaMemcpyAsync(&sample, a.bad_sample, sizeof sample, cudaMemcpyDeviceToHost, stream));
  OPD_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (sample == kern::kNoBadSample) return;
  const auto* at = static_cast<const char*>(target.data_ptr()) +
                   sample * a.target_stride * static_cast<int64_t>(target.element_size());
  // A Long target, or a Byte one (little-endian: its byte lands in value's lowest).
  int64_t value = 0;
  OPD_CUDA_CHECK(
      cudaMemcpyAsync(&value, at, target.element_size(), cudaMemcpyDeviceToHost, stream));
  OPD_CUDA_CHECK(cudaStreamSynchronize(stream));
  OPD_CHECK_T(IndexError, false, "Target {} is out of bounds.", value);
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
  const NllLossMeta m = common::nll_loss_forward_meta(self, target, weight, reduction);
  cuda::DeviceGuard guard(self.device());
  const int index = guard.index();
  Tensor output = cuda::empty_cuda(m.output_sizes, self.scalar_type(), index);
  Tensor total_weight = cuda::empty_cuda({}, self.scalar_type(), index);
  Tensor bad_sample = cuda::empty_cuda({1}, kLong, index);
  kern::NllLossArgs a =
      make_args("nll_loss_forward", self, target, weight, m, ignore_index, bad_sample);
  // One loss from an empty batch: its sum is 0 and its mean 0 / 0, as on CPU.
  if (target.numel() == 0) a.batch = 0;
  const cudaStream_t stream = cuda::current_stream(index);
  cuda::check_launch(
      kern::launch_nll_loss_forward(a, output.data_ptr(), total_weight.data_ptr(), stream),
      "nll_loss_forward");
  check_targets(a, target, stream);
  return {output, total_weight};
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         int64_t ignore_index, const Tensor& total_weight) {
  const NllLossMeta m =
      common::nll_loss_backward_meta(grad_output, self, target, weight, reduction, total_weight);
  cuda::DeviceGuard guard(self.device());
  const int index = guard.index();
  Tensor grad_input = cuda::empty_cuda(m.output_sizes, self.scalar_type(), index);
  if (grad_input.numel() == 0) return grad_input;
  Tensor bad_sample = cuda::empty_cuda({1}, kLong, index);
  const kern::NllLossArgs a =
      make_args("nll_loss_backward", self, target, weight, m, ignore_index, bad_sample);
  // Per sample grad_output is [batch]; otherwise it holds one element.
  const int64_t grad_output_stride = grad_output.dim() == 1 ? grad_output.stride(0) : 0;
  const cudaStream_t stream = cuda::current_stream(index);
  cuda::check_launch(kern::launch_nll_loss_backward(a, grad_output.data_ptr(), grad_output_stride,
                                                    total_weight.data_ptr(), grad_input.data_ptr(),
                                                    grad_input.numel(), stream),
                     "nll_loss_backward");
  check_targets(a, target, stream);
  return grad_input;
}

}  // namespace opd::native
