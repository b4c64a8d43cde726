#pragma once

#include <cstdint>

#include "opd/dispatch_key_set.h"
#include "opd/export.h"

namespace opd {

namespace detail {

// This thread's included and excluded keys, read on every dispatch. constinit and trivially
// destructible so that reading it is one %fs-relative load (no TLS wrapper call); initial-exec,
// so it lives in the static TLS block: libopd_core.so is linked by the executable, or dlopened
// early (as Python's opdispatch._C loads it; Note [Thread state of plugins]), and never
// unloaded. The reclaimer's per-thread call counters are the core's own
// (opd/thread_registry.h), not part of this API.
struct ThreadDispatchKeys {
  uint64_t included = 0;  // raw DispatchKeySet
  uint64_t excluded = 0;  // raw DispatchKeySet
};

extern OPD_API constinit thread_local ThreadDispatchKeys tls_dispatch_keys
    __attribute__((tls_model("initial-exec")));

}  // namespace detail

// This thread's included and excluded keys. A call's key set is
// ((OR of its arguments' key sets) | included) - excluded: exclusion wins.
struct LocalDispatchKeySet {
  DispatchKeySet included;
  DispatchKeySet excluded;
};

inline LocalDispatchKeySet tls_local_dispatch_key_set() {
  const auto& s = detail::tls_dispatch_keys;
  return {DispatchKeySet::from_raw(s.included), DispatchKeySet::from_raw(s.excluded)};
}
OPD_API void tls_set_dispatch_key_included(DispatchKey k, bool included);
OPD_API void tls_set_dispatch_key_excluded(DispatchKey k, bool excluded);
inline bool tls_is_dispatch_key_included(DispatchKey k) {
  return DispatchKeySet::from_raw(detail::tls_dispatch_keys.included).has(k);
}
inline bool tls_is_dispatch_key_excluded(DispatchKey k) {
  return DispatchKeySet::from_raw(detail::tls_dispatch_keys.excluded).has(k);
}

// Adds keys to this thread's included set for the scope; on exit removes exactly the keys it
// added (keys already included stay). Not movable; use on one thread.
class OPD_API IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKeySet keys);
  explicit IncludeDispatchKeyGuard(DispatchKey key)
      : IncludeDispatchKeyGuard(DispatchKeySet(key)) {}
  ~IncludeDispatchKeyGuard();
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;

 private:
  uint64_t added_;
};

// Adds keys to this thread's excluded set for the scope; on exit removes exactly the keys it
// added.
class OPD_API ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet keys);
  explicit ExcludeDispatchKeyGuard(DispatchKey key)
      : ExcludeDispatchKeyGuard(DispatchKeySet(key)) {}
  ~ExcludeDispatchKeyGuard();
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;

 private:
  uint64_t added_;
};

// Dispatches below the autograd keys for the scope: what an autograd kernel sets before it
// redispatches to the backend.
class AutoDispatchBelowAutograd {
 public:
  AutoDispatchBelowAutograd() : guard_(kAutogradKeySet) {}

 private:
  ExcludeDispatchKeyGuard guard_;
};

}  // namespace opd
