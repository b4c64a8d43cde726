// What sort, topk and kthvalue compare an element by: Half and BFloat16 as float, other types as
// themselves; and whether such a key is NaN (never, for integers).
#pragma once

#include <cmath>
#include <type_traits>

#include "opd/half.h"

namespace opd::cpu {

template <class T>
constexpr bool kReducedFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <class T>
auto key_of(T v) {
  if constexpr (kReducedFloat<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

template <class K>
bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

}  // namespace opd::cpu
