#include "common/device_check.h"

#include <string>

namespace opd::common {

namespace {

const Tensor& deref(const Tensor& t) { return t; }
const Tensor& deref(const Tensor* t) {
  static const Tensor undefined;
  return t != nullptr ? *t : undefined;
}

template <class T>
Device check_same_device_impl(std::string_view op, std::span<T> tensors, size_t num_outputs) {
  Device common(DeviceType::CPU);
  for (const auto& p : tensors) {
    const Tensor& t = deref(p);
    if (t.defined() && !t.is_cpu()) {
      common = t.device();
      break;
    }
  }
  const std::string suffix =
      op.empty() ? std::string() : fmt::format(" (when checking arguments for {})", op);
  int cpu_scalars = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = deref(tensors[i]);
    if (!t.defined()) continue;
    const bool is_input = i >= num_outputs;
    if (!common.is_cpu() && is_input && t.dim() == 0 && t.is_cpu()) {
      // A kernel of another device reads one CPU scalar by value.
      OPD_CHECK(cpu_scalars == 0, "Trying to pass too many CPU scalars to non-CPU kernel!");
      ++cpu_scalars;
      continue;
    }
    OPD_CHECK(t.device() == common,
              "Expected all tensors to be on the same device, but found at least two devices, "
              "{} and {}!{}",
              common, t.device(), suffix);
  }
  return common;
}

}  // namespace

Device check_same_device(std::string_view op, std::span<const Tensor> tensors, size_t num_outputs) {
  return check_same_device_impl(op, tensors, num_outputs);
}

Device check_same_device(std::string_view op, std::span<const Tensor* const> tensors,
                         size_t num_outputs) {
  return check_same_device_impl(op, tensors, num_outputs);
}

}  // namespace opd::common
