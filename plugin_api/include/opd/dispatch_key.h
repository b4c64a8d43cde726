#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "opd/device_type.h"
#include "opd/export.h"

namespace opd {

// Note [Key layout]
// PyTorch splits a key set into backend bits and functionality bits, so that a per-backend
// functionality (Dense, AutogradFunctionality) costs one bit whatever the number of backends.
// opdispatch has six backends and two per-backend functionalities, so every runtime key gets a
// bit of its own: the set stays one 64-bit word, the highest-priority key is one count of leading
// zeros, the runtime-table index *is* that bit position, and a fallthrough on AutogradCPU can be
// masked without touching AutogradCUDA (PyTorch needs a per-backend bitset for that).
// Runtime key k (k >= 1) is bit k-1; keys are declared in ascending priority, in PyTorch's
// relative order:
//   the backends (CPU, CUDA, the three vendor slots PrivateUse1..3, Meta)
//   < Python (tensor subclasses and TorchDispatchMode: the Python package's fallback)
//   < Functionalize (the functionalize plugin)
//   < ADInplaceOrView < the autograd keys, one per backend < Tracer
//   < PythonTLSSnapshot (snapshots the Python dispatch state before any other layer runs).
// 18 runtime keys use 18 of the 64 bits. Renumbering a key is a plugin ABI major bump
// (Note [Plugin ABI]): plugins compile key numbers into their registrations.

// Backend components, in ascending priority. Meta is last so that Meta in TLS wins.
enum class BackendComponent : uint8_t { CPU, CUDA, PrivateUse1, PrivateUse2, PrivateUse3, Meta };
inline constexpr int kNumBackends = 6;

enum class DispatchKey : uint8_t {
  Undefined = 0,
  // --- runtime keys, ascending priority; (key - 1) is the bit in a DispatchKeySet ---
  // Dense functionality, one per backend.
  CPU,
  CUDA,
  PrivateUse1,
  PrivateUse2,
  PrivateUse3,
  Meta,
  // Python dispatch: tensor subclasses with __torch_dispatch__ and TorchDispatchMode.
  Python,
  Functionalize,
  ADInplaceOrView,
  // AutogradFunctionality, one per backend.
  AutogradCPU,
  AutogradCUDA,
  AutogradPrivateUse1,
  AutogradPrivateUse2,
  AutogradPrivateUse3,
  AutogradMeta,
  Tracer,
  // Restores the Python dispatch state a call started with (PyTorch's PythonTLSSnapshot).
  PythonTLSSnapshot,
  EndOfRuntimeKeys,
  // --- functionality keys that exist once per backend; they name all their runtime keys ---
  Dense = EndOfRuntimeKeys,
  AutogradFunctionality,
  // --- alias keys: a registration to one fills several runtime keys; never in a set ---
  Autograd,
  CompositeImplicitAutograd,
  CompositeExplicitAutograd,
  CompositeExplicitAutogradNonFunctional,
  EndOfAliasKeys,
};

// Number of slots of a runtime dispatch table: Undefined plus every runtime key.
inline constexpr int kNumRuntimeEntries = static_cast<int>(DispatchKey::EndOfRuntimeKeys);
// Number of distinct DispatchKey values (runtime, functionality and alias).
inline constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::EndOfAliasKeys);

constexpr bool is_runtime_key(DispatchKey k) {
  return k != DispatchKey::Undefined && k < DispatchKey::EndOfRuntimeKeys;
}
constexpr bool is_alias_key(DispatchKey k) {
  return k >= DispatchKey::Autograd && k < DispatchKey::EndOfAliasKeys;
}
constexpr bool is_per_backend_functionality_key(DispatchKey k) {
  return k == DispatchKey::Dense || k == DispatchKey::AutogradFunctionality;
}
// True for CPU, CUDA, PrivateUse1..3, Meta: the keys backend kernels are registered to.
constexpr bool is_backend_key(DispatchKey k) {
  return k >= DispatchKey::CPU && k <= DispatchKey::Meta;
}
constexpr bool is_autograd_key(DispatchKey k) {
  return k >= DispatchKey::AutogradCPU && k <= DispatchKey::AutogradMeta;
}

// The runtime key of a per-backend functionality for one backend.
constexpr DispatchKey to_runtime_key(DispatchKey functionality, BackendComponent b) {
  auto base = functionality == DispatchKey::Dense ? DispatchKey::CPU : DispatchKey::AutogradCPU;
  return static_cast<DispatchKey>(static_cast<int>(base) + static_cast<int>(b));
}
// The backend of a per-backend runtime key. REQUIRES: is_backend_key(k) || is_autograd_key(k).
constexpr BackendComponent backend_of(DispatchKey k) {
  int base = static_cast<int>(is_backend_key(k) ? DispatchKey::CPU : DispatchKey::AutogradCPU);
  return static_cast<BackendComponent>(static_cast<int>(k) - base);
}
constexpr BackendComponent backend_of(DeviceType t) {
  switch (t) {
    case DeviceType::CPU:
      return BackendComponent::CPU;
    case DeviceType::CUDA:
      return BackendComponent::CUDA;
    case DeviceType::Meta:
      return BackendComponent::Meta;
    case DeviceType::PrivateUse1:
      return BackendComponent::PrivateUse1;
    case DeviceType::PrivateUse2:
      return BackendComponent::PrivateUse2;
    case DeviceType::PrivateUse3:
      return BackendComponent::PrivateUse3;
  }
  return BackendComponent::CPU;
}
constexpr DispatchKey backend_key_for(DeviceType t) {
  return to_runtime_key(DispatchKey::Dense, backend_of(t));
}
constexpr DispatchKey autograd_key_for(BackendComponent b) {
  return to_runtime_key(DispatchKey::AutogradFunctionality, b);
}

// The vendor slot (DeviceType::PrivateUse1..3) of a PrivateUse or AutogradPrivateUse key.
constexpr std::optional<DeviceType> privateuse_slot_of(DispatchKey k) {
  if (k >= DispatchKey::PrivateUse1 && k <= DispatchKey::PrivateUse3) {
    return static_cast<DeviceType>(
        static_cast<int>(DeviceType::PrivateUse1) +
        (static_cast<int>(k) - static_cast<int>(DispatchKey::PrivateUse1)));
  }
  if (k >= DispatchKey::AutogradPrivateUse1 && k <= DispatchKey::AutogradPrivateUse3) {
    return static_cast<DeviceType>(
        static_cast<int>(DeviceType::PrivateUse1) +
        (static_cast<int>(k) - static_cast<int>(DispatchKey::AutogradPrivateUse1)));
  }
  return std::nullopt;
}

// The key's name, as PyTorch prints it ("CPU", "AutogradCPU", "CompositeImplicitAutograd").
// Keys of the vendor slots keep their canonical names here; messages meant for users may
// substitute the registered backend name (see display_name()).
OPD_API const char* to_string(DispatchKey k);
// Parses a key name. Also accepts a vendor slot's keys spelled with its registered backend name
// ("NPU", "AutogradNPU"). Throws ValueError naming the text when nothing matches.
OPD_API DispatchKey parse_dispatch_key(std::string_view name);
OPD_API std::optional<DispatchKey> try_parse_dispatch_key(std::string_view name);

// Names the PrivateUse1 backend, once per process ("npu"). Calling again with the same name is a
// no-op. Throws ValueError for a second, different name (naming both) or a built-in device name
// (cpu, cuda, meta). Thread-safe.
OPD_API void register_privateuse1_backend(std::string_view name);
// The registered name, or "privateuseone" before any registration. Thread-safe.
OPD_API std::string privateuse1_backend_name();
// The name of vendor slot `slot` (DeviceType::PrivateUse1..3): the registered one, or
// "privateuseone", "privateusetwo", "privateusethree" while the slot is unnamed. Thread-safe.
OPD_API std::string privateuse_backend_name(DeviceType slot);
// The vendor slot whose name (registered or default) is `name`, if any. Thread-safe.
OPD_API std::optional<DeviceType> privateuse_slot_named(std::string_view name);
// `key`'s name for messages: a vendor slot's keys spelled with its backend name in upper case, as
// PyTorch does ("NPU", "AutogradNPU"); other keys as to_string().
OPD_API std::string display_name(DispatchKey key);

}  // namespace opd
