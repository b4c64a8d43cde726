#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <ostream>
#include <string_view>

#include "opd/error.h"

namespace opd {

// How a tensor's elements are laid out. Only Strided tensors exist in opdispatch; the other
// values are here so that schemas and arguments naming them parse and print.
enum class Layout : int8_t { Strided, Sparse, SparseCsr, Mkldnn };

// The memory_format argument of factory and copy operators.
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

// c10's names: "Strided", "Sparse", "SparseCsr", "Mkldnn".
constexpr const char* to_string(Layout l) {
  switch (l) {
    case Layout::Strided:
      return "Strided";
    case Layout::Sparse:
      return "Sparse";
    case Layout::SparseCsr:
      return "SparseCsr";
    case Layout::Mkldnn:
      return "Mkldnn";
  }
  return "Unknown";
}
// Python's names, which schema defaults use: "strided", "sparse_coo", "sparse_csr", "_mkldnn".
constexpr const char* python_name(Layout l) {
  switch (l) {
    case Layout::Strided:
      return "strided";
    case Layout::Sparse:
      return "sparse_coo";
    case Layout::SparseCsr:
      return "sparse_csr";
    case Layout::Mkldnn:
      return "_mkldnn";
  }
  return "unknown";
}
// c10's names: "Contiguous", "Preserve", "ChannelsLast", "ChannelsLast3d".
constexpr const char* to_string(MemoryFormat m) {
  switch (m) {
    case MemoryFormat::Contiguous:
      return "Contiguous";
    case MemoryFormat::Preserve:
      return "Preserve";
    case MemoryFormat::ChannelsLast:
      return "ChannelsLast";
    case MemoryFormat::ChannelsLast3d:
      return "ChannelsLast3d";
  }
  return "Unknown";
}
// Python's names, which schema defaults use: "contiguous_format", "preserve_format",
// "channels_last", "channels_last_3d".
constexpr const char* python_name(MemoryFormat m) {
  switch (m) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::Preserve:
      return "preserve_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::ChannelsLast3d:
      return "channels_last_3d";
  }
  return "unknown";
}

// Accepts python_name() and to_string() spellings, optionally prefixed by "torch.".
// Throws ValueError naming the text otherwise.
inline Layout parse_layout(std::string_view text) {
  std::string_view bare = text.starts_with("torch.") ? text.substr(6) : text;
  for (Layout l : {Layout::Strided, Layout::Sparse, Layout::SparseCsr, Layout::Mkldnn}) {
    if (bare == python_name(l) || bare == to_string(l)) return l;
  }
  throw ValueError(fmt::format(
      "Unknown layout '{}'; expected one of strided, sparse_coo, sparse_csr, _mkldnn", text));
}
inline MemoryFormat parse_memory_format(std::string_view text) {
  std::string_view bare = text.starts_with("torch.") ? text.substr(6) : text;
  for (MemoryFormat m : {MemoryFormat::Contiguous, MemoryFormat::Preserve,
                         MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d}) {
    if (bare == python_name(m) || bare == to_string(m)) return m;
  }
  throw ValueError(
      fmt::format("Unknown memory format '{}'; expected one of contiguous_format, preserve_format, "
                  "channels_last, channels_last_3d",
                  text));
}

inline std::ostream& operator<<(std::ostream& out, Layout l) { return out << to_string(l); }
inline std::ostream& operator<<(std::ostream& out, MemoryFormat m) { return out << to_string(m); }

}  // namespace opd

template <>
struct fmt::formatter<opd::Layout> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(opd::Layout l, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(opd::to_string(l), ctx);
  }
};
template <>
struct fmt::formatter<opd::MemoryFormat> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(opd::MemoryFormat m, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(opd::to_string(m), ctx);
  }
};
