#pragma once

// The device rule of operators that take several tensors.

#include <span>
#include <string_view>

#include "opd/device.h"
#include "opd/tensor.h"

namespace opd::common {

// The device the operator runs on: the first device among the defined tensors that is not the
// CPU, else the CPU. Every other defined tensor must be on it, except that one zero-dim CPU
// tensor among the inputs (a wrapped number, or a PyTorch "CPU scalar") may join tensors of
// another device, as in PyTorch's TensorIterator. The first `num_outputs` tensors are outputs,
// which never get that exception. Throws opd::Error, in PyTorch's words:
//   "Expected all tensors to be on the same device, but found at least two devices, meta and
//    cpu!"
// followed, when `op` is not empty, by " (when checking arguments for <op>)" as PyTorch's
// non-iterator check does; and "Trying to pass too many CPU scalars to non-CPU kernel!".
// Undefined tensors are skipped; none at all gives the CPU.
Device check_same_device(std::string_view op, std::span<const Tensor> tensors,
                         size_t num_outputs = 0);
// The same over borrowed tensors; a null pointer counts as an undefined tensor.
Device check_same_device(std::string_view op, std::span<const Tensor* const> tensors,
                         size_t num_outputs = 0);

}  // namespace opd::common
