#include "common/output.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <vector>

#include "common/tensor_iterator.h"
#include "common/type_meta_name.h"
#include "common/view_shape.h"
#include "opd/ops.h"
#include "opd/tensor_options.h"
#include "opd/warning.h"

namespace opd::common {

namespace {
// This plugin's own allocators, by device type (each plugin links its own copy of this library).
std::atomic<OutputAllocator> output_allocators[kNumDeviceTypes];
}  // namespace

void set_output_allocator(DeviceType type, OutputAllocator allocate) noexcept {
  output_allocators[static_cast<int>(type)].store(allocate, std::memory_order_release);
}

Tensor empty_output(IntArrayRef sizes, ScalarType dtype, Device device) {
  const OutputAllocator allocate =
      output_allocators[static_cast<int>(device.type)].load(std::memory_order_acquire);
  if (allocate != nullptr) return allocate(sizes, dtype, device);
  return opd::empty(sizes, TensorOptions().dtype(dtype).device(device));
}

Tensor converted(const Tensor& t, ScalarType dtype) {
  if (t.scalar_type() == dtype) return t;
  Tensor result = empty_output(t.sizes(), dtype, t.device());
  // Keep the layout, as PyTorch's to() (Note [Output layout]): a contiguous t may still have
  // other strides over its size-1 dimensions ([1, 3] strides [1, 1]), which to() keeps too.
  if (!t.strides().equals(result.strides())) {
    const DimVector strides = opd::is_non_overlapping_and_dense(t.sizes(), t.strides())
                                  ? DimVector(t.strides().begin(), t.strides().end())
                                  : infer_dense_strides(t.sizes(), t.strides());
    result.unsafe_get_impl()->set_sizes_and_strides(
        t.sizes(), IntArrayRef(strides.data(), strides.size()), result.storage_offset());
  }
  result.copy_(t);
  return result;
}

std::string shape_str(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

bool resize_output(std::string_view, const Tensor& out, IntArrayRef sizes) {
  if (out.sizes().equals(sizes)) return false;
  if (out.numel() != 0) {
    opd::warn(fmt::format(
        "An output with one or more elements was resized since it had shape {}, which does not "
        "match the required output shape {}. This behavior is deprecated, and in a future "
        "PyTorch release outputs will not be resized unless they have zero elements. You can "
        "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
        "t.resize_(0).",
        shape_str(out.sizes()), shape_str(sizes)));
  }
  out.resize_(sizes);
  return true;
}

const char* type_meta_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::UInt8:
      return "unsigned char";
    case ScalarType::Int8:
      return "signed char";
    case ScalarType::Int16:
      return "short int";
    case ScalarType::Int32:
      return "int";
    case ScalarType::Int64:
      return "long int";
    case ScalarType::Float16:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    case ScalarType::Float32:
      return "float";
    case ScalarType::Float64:
      return "double";
    case ScalarType::ComplexFloat:
      return "c10::complex<float>";
    case ScalarType::ComplexDouble:
      return "c10::complex<double>";
    case ScalarType::Undefined:
      break;
  }
  return "Undefined";
}

Tensor structured_output(std::string_view op, const Tensor& out, IntArrayRef sizes,
                         ScalarType dtype, Device device) {
  if (!out.defined()) return empty_output(sizes, dtype, device);
  OPD_CHECK(out.scalar_type() == dtype, "Expected out tensor to have dtype {}, but got {} instead",
            type_meta_name(dtype), type_meta_name(out.scalar_type()));
  OPD_CHECK(out.device() == device, "Expected out tensor to have device {}, but got {} instead",
            device, out.device());
  resize_output(op, out, sizes);
  if (out.is_contiguous() || out.is_meta()) return out;
  return empty_output(sizes, dtype, device);
}

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  // Visit the dimensions from the smallest stride up; each must start where the previous ends.
  IntArrayRef sizes = t.sizes(), strides = t.strides();
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return strides[a] < strides[b] || (strides[a] == strides[b] && sizes[a] < sizes[b]);
  });
  int64_t expected = 1;
  for (size_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

bool has_internal_overlap(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return false;
  IntArrayRef sizes = t.sizes(), strides = t.strides();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (strides[d] == 0 && sizes[d] > 1) return true;
  }
  return false;
}

void check_no_internal_overlap(const Tensor& out) {
  OPD_CHECK(!has_internal_overlap(out),
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the "
            "operation.");
}

void check_no_partial_overlap(const Tensor& out, const Tensor& input) {
  if (out.is_same(input) || out.numel() == 0 || input.numel() == 0) return;
  if (!out.storage().is_same(input.storage())) return;
  if (!is_non_overlapping_and_dense(out) || !is_non_overlapping_and_dense(input)) return;
  // Byte ranges within the shared storage (offsets, not addresses, so that Meta tensors, which
  // have no memory, are judged the same way).
  const auto range = [](const Tensor& t) {
    const int64_t item = static_cast<int64_t>(t.element_size());
    const int64_t begin = t.storage_offset() * item;
    return std::pair{begin, begin + t.numel() * item};
  };
  const auto [out_begin, out_end] = range(out);
  const auto [in_begin, in_end] = range(input);
  const bool same_range = out_begin == in_begin && out_end == in_end;
  const bool partial = same_range ? !out.strides().equals(input.strides())
                                  : out_begin < in_end && in_begin < out_end;
  OPD_CHECK(!partial,
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing the "
            "operation.");
}

}  // namespace opd::common
