#pragma once

#include <optional>

#include "opd/device.h"
#include "opd/layout.h"
#include "opd/scalar_type.h"

namespace opd {

// The options of a factory function, as ATen's TensorOptions: each field is either set or left
// to the operator's default (dtype Float, device CPU, layout Strided). Built by chaining:
//   opd::ones({2, 3}, opd::TensorOptions().dtype(opd::kDouble).device(opd::kMeta))
// and converts implicitly from a dtype or a device: opd::zeros({4}, opd::kLong).
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}
  TensorOptions(Device device) : device_(device) {}
  TensorOptions(DeviceType device) : device_(Device(device)) {}

  TensorOptions dtype(std::optional<ScalarType> v) const { return with(&TensorOptions::dtype_, v); }
  TensorOptions device(std::optional<Device> v) const { return with(&TensorOptions::device_, v); }
  TensorOptions layout(std::optional<Layout> v) const { return with(&TensorOptions::layout_, v); }
  TensorOptions pinned_memory(std::optional<bool> v) const {
    return with(&TensorOptions::pinned_memory_, v);
  }
  TensorOptions memory_format(std::optional<MemoryFormat> v) const {
    return with(&TensorOptions::memory_format_, v);
  }
  // Makes the result a leaf that requires grad (needs the autograd plugin).
  TensorOptions requires_grad(std::optional<bool> v) const {
    return with(&TensorOptions::requires_grad_, v);
  }

  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  std::optional<Layout> layout_opt() const { return layout_; }
  std::optional<bool> pinned_memory_opt() const { return pinned_memory_; }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }
  std::optional<bool> requires_grad_opt() const { return requires_grad_; }

  ScalarType dtype() const { return dtype_.value_or(ScalarType::Float32); }
  Device device() const { return device_.value_or(Device(DeviceType::CPU)); }
  Layout layout() const { return layout_.value_or(Layout::Strided); }
  bool requires_grad() const { return requires_grad_.value_or(false); }

 private:
  template <class T>
  TensorOptions with(std::optional<T> TensorOptions::*field, std::optional<T> v) const {
    TensorOptions copy = *this;
    copy.*field = v;
    return copy;
  }

  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<Layout> layout_;
  std::optional<bool> pinned_memory_;
  std::optional<MemoryFormat> memory_format_;
  std::optional<bool> requires_grad_;
};

}  // namespace opd
