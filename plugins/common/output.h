#pragma once

// Outputs of operators: allocation, the out= resize rule, and the memory-overlap checks that
// keep a kernel from reading what it has already written.

#include <string_view>

#include "opd/device.h"
#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd::common {

// Note [Output allocation]
// A kernel's new outputs (the result of add, a converted input, a temporary) come from its own
// backend's allocator, called directly, as PyTorch's structured kernels call
// at::detail::empty_cpu rather than aten::empty: a dispatched aten::empty would cost a small
// operator a sixth of its time. Every plugin links its own copy of this library, so a backend
// plugin names its allocator for its device type when it registers (set_output_allocator), and
// empty_output then calls it for tensors of that type; for any other device type (Meta, whose
// plugin sets none, or a device served by another plugin) empty_output calls opd::empty through
// the dispatcher. Overriding aten::empty therefore changes what factories return, not the
// outputs of kernels, in PyTorch and here alike.

// A new contiguous tensor of `sizes` and `dtype` on `device`; see Note [Output allocation].
Tensor empty_output(IntArrayRef sizes, ScalarType dtype, Device device);

// Makes a new contiguous tensor: a backend's allocator, as its empty kernel would.
using OutputAllocator = Tensor (*)(IntArrayRef sizes, ScalarType dtype, Device device);
// Has empty_output call `allocate` for tensors on devices of `type`, in the calling plugin only
// (null: the dispatcher again). A plugin calls it while it registers.
void set_output_allocator(DeviceType type, OutputAllocator allocate) noexcept;

// PyTorch's out= rule (at::native::resize_output): an `out` of shape `sizes` is kept; any other
// is resized to `sizes` through opd::resize_ (a dispatched call), silently when it is empty
// (numel 0), else with PyTorch 1.13's deprecation warning (opd::warn, a UserWarning in Python)
//   "An output with one or more elements was resized since it had shape [4], which does not
//    match the required output shape [2, 3]. This behavior is deprecated, ..."
// Returns whether it resized. `op` names the operator (unused: PyTorch's text names none).
bool resize_output(std::string_view op, const Tensor& out, IntArrayRef sizes);

// The output of a structured operator whose meta function makes it (`structured_inherits:
// MetaBase`, Note [Structured kernels] in tools/gen/structured.h), as PyTorch's out= kernels
// set it: a new contiguous tensor of `sizes`, `dtype` on `device` when `out` is undefined; else
// `out`, which must have `dtype` and `device` (opd::Error "Expected out tensor to have dtype long
// int, but got float instead", PyTorch's type names; "Expected out tensor to have device cpu,
// but got meta instead"), resized by resize_output, and returned when it is contiguous (or a
// Meta tensor, with no data), else a new contiguous tensor that the generated kernel copies into
// it after the impl (PyTorch's proxy output).
Tensor structured_output(std::string_view op, const Tensor& out, IntArrayRef sizes,
                         ScalarType dtype, Device device);

// PyTorch's assert_no_internal_overlap, for a tensor about to be written: refuses one whose
// elements share memory through a zero stride over a dimension of size > 1 (an expanded tensor),
// with opd::Error "unsupported operation: more than one element of the written-to tensor refers
// to a single memory location. Please clone() the tensor before performing the operation."
// Layouts too hard to decide cheaply are let through, as in PyTorch.
void check_no_internal_overlap(const Tensor& out);

// Whether check_no_internal_overlap refuses `t` (PyTorch's has_internal_overlap == YES).
bool has_internal_overlap(const Tensor& t);

// PyTorch's assert_no_partial_overlap: refuses an `input` whose memory partly overlaps that of
// the tensor written, `out` (the same memory with the same strides is fine: an in-place
// operator), with opd::Error "unsupported operation: some elements of the input tensor and the
// written-to tensor refer to a single memory location. Please clone() the tensor before
// performing the operation."
void check_no_partial_overlap(const Tensor& out, const Tensor& input);

// `t` when it has `dtype`, else a copy of it converted to `dtype`, on its device, laid out as
// PyTorch's to() lays it out: t's strides when t is dense and non-overlapping, else dense in the
// order of t's dimensions (infer_dense_strides). Allocated as empty_output, then copy_.
Tensor converted(const Tensor& t, ScalarType dtype);

// Whether the elements of `t` fill a block of memory exactly once, in some order of dimensions
// (PyTorch's is_non_overlapping_and_dense).
bool is_non_overlapping_and_dense(const Tensor& t);

// "[2, 3]": sizes as PyTorch prints them in messages.
std::string shape_str(IntArrayRef sizes);

}  // namespace opd::common
