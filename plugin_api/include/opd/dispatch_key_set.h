#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include "opd/dispatch_key.h"

namespace opd {

// A set of runtime dispatch keys in one 64-bit word (see Note [Key layout] in dispatch_key.h).
// Value type; every operation is constexpr and O(1) except printing.
class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  // A runtime key gives a one-key set; a per-backend functionality key (Dense,
  // AutogradFunctionality) gives all its runtime keys; Undefined gives the empty set.
  // Alias keys are never stored in a set: use runtime_keys_for(). Throws ValueError for them.
  constexpr explicit DispatchKeySet(DispatchKey k);
  static constexpr DispatchKeySet from_raw(uint64_t repr) { return DispatchKeySet(repr, 0); }
  constexpr uint64_t raw() const { return repr_; }

  constexpr bool empty() const { return repr_ == 0; }
  constexpr bool has(DispatchKey k) const {
    return is_runtime_key(k) && (repr_ >> (static_cast<int>(k) - 1)) & 1;
  }
  constexpr bool has_any(DispatchKeySet s) const { return (repr_ & s.repr_) != 0; }
  constexpr bool is_superset_of(DispatchKeySet s) const { return (repr_ & s.repr_) == s.repr_; }

  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_raw(repr_ | o.repr_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_raw(repr_ & o.repr_); }
  // Set difference.
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_raw(repr_ & ~o.repr_); }
  constexpr bool operator==(const DispatchKeySet&) const = default;
  DispatchKeySet add(DispatchKey k) const { return *this | DispatchKeySet(k); }
  DispatchKeySet remove(DispatchKey k) const { return *this - DispatchKeySet(k); }

  // Index of the highest-priority key in a runtime dispatch table; 0 (Undefined) when empty.
  constexpr int index() const { return std::bit_width(repr_); }
  constexpr DispatchKey highest_priority_key() const { return static_cast<DispatchKey>(index()); }

  // Iterates the runtime keys in ascending priority.
  class iterator {
   public:
    constexpr explicit iterator(uint64_t rest) : rest_(rest) {}
    constexpr DispatchKey operator*() const {
      return static_cast<DispatchKey>(std::countr_zero(rest_) + 1);
    }
    constexpr iterator& operator++() {
      rest_ &= rest_ - 1;
      return *this;
    }
    constexpr bool operator==(const iterator&) const = default;

   private:
    uint64_t rest_;
  };
  constexpr iterator begin() const { return iterator(repr_); }
  constexpr iterator end() const { return iterator(0); }

  // "DispatchKeySet(CPU, AutogradCPU)".
  OPD_API std::string to_string() const;

 private:
  constexpr DispatchKeySet(uint64_t repr, int) : repr_(repr) {}
  uint64_t repr_ = 0;
};

constexpr DispatchKeySet key_bit(DispatchKey k) {
  return DispatchKeySet::from_raw(uint64_t{1} << (static_cast<int>(k) - 1));
}

// Every runtime key.
inline constexpr DispatchKeySet kFullKeySet =
    DispatchKeySet::from_raw((uint64_t{1} << (kNumRuntimeEntries - 1)) - 1);
// The Dense keys of every backend.
inline constexpr DispatchKeySet kBackendKeySet =
    key_bit(DispatchKey::CPU) | key_bit(DispatchKey::CUDA) | key_bit(DispatchKey::PrivateUse1) |
    key_bit(DispatchKey::PrivateUse2) | key_bit(DispatchKey::PrivateUse3) |
    key_bit(DispatchKey::Meta);
// AutogradFunctionality for every backend: what AutoDispatchBelowAutograd excludes.
inline constexpr DispatchKeySet kAutogradKeySet =
    key_bit(DispatchKey::AutogradCPU) | key_bit(DispatchKey::AutogradCUDA) |
    key_bit(DispatchKey::AutogradPrivateUse1) | key_bit(DispatchKey::AutogradPrivateUse2) |
    key_bit(DispatchKey::AutogradPrivateUse3) | key_bit(DispatchKey::AutogradMeta);
// The keys of Python dispatch: a tensor subclass carries both, and an active TorchDispatchMode
// adds both to the thread's included keys (PyTorch's python_ks).
inline constexpr DispatchKeySet kPythonKeySet =
    key_bit(DispatchKey::Python) | key_bit(DispatchKey::PythonTLSSnapshot);

// All keys strictly below `k` in priority: what redispatching "past k" keeps.
constexpr DispatchKeySet keys_below(DispatchKey k) {
  return DispatchKeySet::from_raw((uint64_t{1} << (static_cast<int>(k) - 1)) - 1);
}

// The runtime keys a registration to `k` fills: itself for a runtime key; every runtime key of
// a per-backend functionality; for alias keys, Autograd -> the autograd keys,
// CompositeExplicitAutograd(NonFunctional) -> the backend keys, CompositeImplicitAutograd ->
// backend and autograd keys. Undefined -> empty.
constexpr DispatchKeySet runtime_keys_for(DispatchKey k) {
  switch (k) {
    case DispatchKey::Undefined:
      return {};
    case DispatchKey::Dense:
    case DispatchKey::CompositeExplicitAutograd:
    case DispatchKey::CompositeExplicitAutogradNonFunctional:
      return kBackendKeySet;
    case DispatchKey::AutogradFunctionality:
    case DispatchKey::Autograd:
      return kAutogradKeySet;
    case DispatchKey::CompositeImplicitAutograd:
      return kBackendKeySet | kAutogradKeySet;
    default:
      return is_runtime_key(k) ? key_bit(k) : DispatchKeySet();
  }
}

namespace detail {
[[noreturn]] OPD_API void throw_alias_key_in_set(DispatchKey k);
}

constexpr DispatchKeySet::DispatchKeySet(DispatchKey k) {
  if (is_alias_key(k)) detail::throw_alias_key_in_set(k);
  repr_ = runtime_keys_for(k).raw();
}

// The key set a tensor on `device` carries: its backend key, ADInplaceOrView, and its
// backend's autograd key (the autograd keys fall through unless the autograd plugin serves them).
constexpr DispatchKeySet key_set_for_device(DeviceType device) {
  BackendComponent b = backend_of(device);
  return key_bit(to_runtime_key(DispatchKey::Dense, b)) | key_bit(DispatchKey::ADInplaceOrView) |
         key_bit(autograd_key_for(b));
}

}  // namespace opd
