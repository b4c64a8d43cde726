#pragma once

// Byte counts as the allocators' messages print them: "2.00 GiB", "1.50 MiB", "512 bytes".

#include <fmt/format.h>

#include <cstddef>
#include <string>

namespace opd::cuda {

inline std::string format_bytes(size_t n) {
  const double v = static_cast<double>(n);
  if (n >= (size_t{1} << 30)) return fmt::format("{:.2f} GiB", v / (1 << 30));
  if (n >= (size_t{1} << 20)) return fmt::format("{:.2f} MiB", v / (1 << 20));
  if (n >= (size_t{1} << 10)) return fmt::format("{:.2f} KiB", v / (1 << 10));
  return fmt::format("{} bytes", n);
}

}  // namespace opd::cuda
