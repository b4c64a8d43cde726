#include "opd/dispatch_key_set.h"

#include "opd/error.h"

namespace opd {

namespace detail {
void throw_alias_key_in_set(DispatchKey k) {
  throw ValueError(
      fmt::format("DispatchKeySet: {} is an alias key and is never stored in a key set; use "
                  "runtime_keys_for({}) for the keys it stands for",
                  to_string(k), to_string(k)));
}
}  // namespace detail

std::string DispatchKeySet::to_string() const {
  std::string out = "DispatchKeySet(";
  bool first = true;
  for (DispatchKey k : *this) {
    if (!first) out += ", ";
    out += opd::to_string(k);
    first = false;
  }
  return out + ")";
}

}  // namespace opd
