#pragma once

#include <cstdint>

namespace opd {

// The kinds of device a tensor can live on. PrivateUse1..3 are the vendor slots (PyTorch's enum
// reserves the three dispatch keys; its DeviceType has only the first); a slot's printed name is
// set by the plugin that claims it (register_privateuse_backend(), dispatch_key.h).
enum class DeviceType : int8_t {
  CPU = 0,
  CUDA = 1,
  Meta = 2,
  PrivateUse1 = 3,
  PrivateUse2 = 4,
  PrivateUse3 = 5,
};
inline constexpr int kNumDeviceTypes = 6;

constexpr bool is_privateuse(DeviceType t) {
  return t >= DeviceType::PrivateUse1 && t <= DeviceType::PrivateUse3;
}

// ATen's short names.
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline constexpr DeviceType kMeta = DeviceType::Meta;

}  // namespace opd
