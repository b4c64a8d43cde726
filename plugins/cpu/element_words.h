#pragma once

// Same-dtype moves (cat, flip/roll/repeat, index, index_select, gather/scatter) copy elements as
// opaque words of their size, so one instantiation per size serves every dtype (Half, BFloat16
// and the complex types included).

#include <cstddef>
#include <cstdint>

namespace opd::cpu {

// A 16-byte element (ComplexDouble) as a plain value.
struct Word16 {
  uint64_t lo, hi;
};

// Calls f(W{}) with W the unsigned word of `size` bytes (1, 2, 4, 8), else Word16.
template <class F>
void visit_word(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    default:
      return f(Word16{});
  }
}

}  // namespace opd::cpu
