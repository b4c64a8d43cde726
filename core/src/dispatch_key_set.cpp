#include "opd/dispatch_key_set.h"

#include "opd/error.h"

namespace opd {

DispatchKeySet::DispatchKeySet(DispatchKey k) {
  if (k == DispatchKey::Undefined) return;
  OPD_CHECK_T(ValueError, !is_alias_key(k) && k < DispatchKey::EndOfAliasKeys,
              "DispatchKeySet: {} is an alias key and is never stored in a key set; use "
              "runtime_keys_for({}) for the keys it stands for",
              opd::to_string(k), opd::to_string(k));
  repr_ = runtime_keys_for(k).raw();
}

DispatchKeySet runtime_keys_for(DispatchKey k) {
  switch (k) {
    case DispatchKey::Undefined: return {};
    case DispatchKey::Dense: return kBackendKeySet;
    case DispatchKey::AutogradFunctionality:
    case DispatchKey::Autograd: return kAutogradKeySet;
    case DispatchKey::CompositeExplicitAutograd:
    case DispatchKey::CompositeExplicitAutogradNonFunctional: return kBackendKeySet;
    case DispatchKey::CompositeImplicitAutograd: return kBackendKeySet | kAutogradKeySet;
    default:
      OPD_INTERNAL_ASSERT(is_runtime_key(k), "unknown dispatch key {}", static_cast<int>(k));
      return key_bit(k);
  }
}

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
