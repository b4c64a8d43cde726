#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "opd/device_type.h"
#include "opd/error.h"
#include "opd/export.h"

namespace opd {

// The device's name as PyTorch prints it: "cpu", "cuda", "meta", and for a vendor slot the name
// its plugin registered ("npu"), "privateuseone" (two, three) before that. The pointer
// stays valid for the life of the process. Thread-safe.
OPD_API const char* device_type_name(DeviceType t);

// A device: a type and an index. index -1 means "the current device of that type"; a CPU device
// has index -1 or 0. A plain value: cheap to copy, hashable, comparable.
struct Device {
  DeviceType type;
  int8_t index = -1;

  // Throws ValueError for an index below -1 or a CPU index above 0.
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) { validate(); }
  // Parses "cpu", "cuda", "cuda:1", "meta", "privateuseone:0" ("privateusetwo", "privateusethree")
  // and the vendor slots' registered names ("npu:1"), as torch.device(str) does. Throws ValueError:
  //   "Device string must not be empty"
  //   "Invalid device string: 'cuda:x'"
  //   "Expected one of cpu, cuda, meta, privateuseone device type at start of device string: foo"
  //   "CPU device index must be -1 or zero, got 1"
  OPD_API Device(std::string_view text);
  Device(const char* text) : Device(std::string_view(text)) {}
  Device(const std::string& text) : Device(std::string_view(text)) {}

  bool has_index() const { return index != -1; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_meta() const { return type == DeviceType::Meta; }
  bool is_privateuse1() const { return type == DeviceType::PrivateUse1; }
  // On any of the three vendor slots.
  bool is_privateuse() const { return opd::is_privateuse(type); }

  // "cpu", "cuda:0", "meta", "npu:1": the form Device(std::string_view) parses.
  OPD_API std::string str() const;

  constexpr bool operator==(const Device&) const = default;

 private:
  constexpr void validate() const {
    OPD_CHECK_T(ValueError, index >= -1, "Device index must be -1 or non-negative, got {}",
                static_cast<int>(index));
    OPD_CHECK_T(ValueError, type != DeviceType::CPU || index <= 0,
                "CPU device index must be -1 or zero, got {}", static_cast<int>(index));
  }
};

inline std::ostream& operator<<(std::ostream& out, const Device& d) { return out << d.str(); }

}  // namespace opd

template <>
struct std::hash<opd::Device> {
  size_t operator()(const opd::Device& d) const noexcept {
    return (static_cast<size_t>(static_cast<uint8_t>(d.type)) << 8) | static_cast<uint8_t>(d.index);
  }
};

// fmt::format("{}", device) prints device.str().
template <>
struct fmt::formatter<opd::Device> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(const opd::Device& d, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(d.str(), ctx);
  }
};
