#pragma once

// From a built TensorIterator to what a device kernel takes (kern::Geometry), and the device and
// stream the kernel runs on.

#include <cuda_runtime_api.h>

#include <string_view>

#include "common/tensor_iterator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/kernels/kernel_args.h"
#include "opd/scalar.h"
#include "opd/tensor.h"

namespace opd::cuda {

// The kernel's view of `dtype`. Throws TypeError "\"<kernel>\" not implemented for
// 'ComplexFloat'" for the types the device kernels do not cover: the complex ones unless
// `with_complex` (the kernels that move, convert or sum values: copy_, fill_, sum, mean, and the
// cuBLAS products).
kern::Dtype kernel_dtype(ScalarType dtype, std::string_view kernel, bool with_complex = false);

// `s` in both forms a kernel may read.
kern::ScalarArg scalar_arg(const Scalar& s);
kern::ScalarArg scalar_arg(const std::optional<Scalar>& s);

// A launch of an elementwise kernel: its geometry, in which the CPU scalars among the inputs
// (PyTorch lets a zero-dim CPU tensor join CUDA operands) travel by value, and where it runs.
struct Launch {
  kern::Geometry geometry;
  int device = 0;
  cudaStream_t stream = nullptr;
};

// REQUIRES: iter built for CUDA operands (and CPU scalars), numel() > 0. Throws opd::Error when
// the loop has more operands or dims than a device kernel takes (kern::kMaxOperands,
// kern::kMaxDims).
Launch make_launch(const common::TensorIterator& iter);

}  // namespace opd::cuda

namespace opd::cuda {

// Runs launch(const kern::Geometry&, kern::Stream) -> int (a kern::launch_* call) over iter on
// its device, then casts the outputs (TensorIterator::cast_outputs). `kernel` names the kernel
// in errors.
template <class LaunchFn>
void run_elementwise(const common::TensorIterator& iter, std::string_view kernel,
                     LaunchFn&& launch_fn) {
  if (iter.numel() > 0) {
    Launch launch = make_launch(iter);
    DeviceGuard guard(launch.device);
    check_launch(launch_fn(launch.geometry, static_cast<kern::Stream>(launch.stream)), kernel);
  }
  iter.cast_outputs();
}

}  // namespace opd::cuda
