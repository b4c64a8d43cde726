#pragma once

#include <cstdint>

namespace opd {

// The kinds of device a tensor can live on. PrivateUse1 is the vendor slot; its printed name
// is set once by register_privateuse1_backend() (see dispatch_key.h).
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2, PrivateUse1 = 3 };
inline constexpr int kNumDeviceTypes = 4;

// ATen's short names.
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline constexpr DeviceType kMeta = DeviceType::Meta;

}  // namespace opd
