#include "opd/local_dispatch_key_set.h"

#include "opd/thread_registry.h"

namespace opd {
namespace detail {

OPD_API constinit thread_local ThreadDispatchKeys tls_dispatch_keys
    __attribute__((tls_model("initial-exec")));

}  // namespace detail

void tls_set_dispatch_key_included(DispatchKey k, bool included) {
  auto& s = detail::tls_dispatch_keys;
  uint64_t bits = DispatchKeySet(k).raw();
  s.included = included ? (s.included | bits) : (s.included & ~bits);
}

void tls_set_dispatch_key_excluded(DispatchKey k, bool excluded) {
  auto& s = detail::tls_dispatch_keys;
  uint64_t bits = DispatchKeySet(k).raw();
  s.excluded = excluded ? (s.excluded | bits) : (s.excluded & ~bits);
}

IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKeySet keys) {
  auto& s = detail::tls_dispatch_keys;
  added_ = keys.raw() & ~s.included;
  s.included |= added_;
}

IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() {
  detail::tls_dispatch_keys.included &= ~added_;
}

ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKeySet keys) {
  auto& s = detail::tls_dispatch_keys;
  added_ = keys.raw() & ~s.excluded;
  s.excluded |= added_;
}

ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() {
  detail::tls_dispatch_keys.excluded &= ~added_;
}

}  // namespace opd
