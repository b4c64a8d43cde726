#include "opd/dispatch_key.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "opd/error.h"
#include "opd/thread_annotations.h"
#include "privateuse_slots.h"

namespace opd {
namespace {

constexpr std::array<const char*, kNumDispatchKeys> kKeyNames = {
    "Undefined",
    "CPU",
    "CUDA",
    "PrivateUse1",
    "PrivateUse2",
    "PrivateUse3",
    "Meta",
    "Python",
    "Functionalize",
    "ADInplaceOrView",
    "AutogradCPU",
    "AutogradCUDA",
    "AutogradPrivateUse1",
    "AutogradPrivateUse2",
    "AutogradPrivateUse3",
    "AutogradMeta",
    "Tracer",
    "PythonTLSSnapshot",
    "Dense",
    "AutogradFunctionality",
    "Autograd",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
};

using detail::default_privateuse_name;
using detail::kNumPrivateUseSlots;
using detail::privateuse_slot_at;
using detail::privateuse_slot_index;
using detail::privateuse_slots;
using detail::PrivateUseSlots;

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

}  // namespace

const char* to_string(DispatchKey k) {
  auto i = static_cast<size_t>(k);
  return i < kKeyNames.size() ? kKeyNames[i] : "UNKNOWN_DISPATCH_KEY";
}

std::optional<DispatchKey> try_parse_dispatch_key(std::string_view name) {
  for (size_t i = 0; i < kKeyNames.size(); ++i) {
    if (name == kKeyNames[i]) return static_cast<DispatchKey>(i);
  }
  for (auto k : {DispatchKey::PrivateUse1, DispatchKey::PrivateUse2, DispatchKey::PrivateUse3,
                 DispatchKey::AutogradPrivateUse1, DispatchKey::AutogradPrivateUse2,
                 DispatchKey::AutogradPrivateUse3}) {
    if (name == display_name(k)) return k;
  }
  return std::nullopt;
}

DispatchKey parse_dispatch_key(std::string_view name) {
  auto k = try_parse_dispatch_key(name);
  if (!k) {
    std::string known;
    for (const char* n : kKeyNames) known += (known.empty() ? "" : ", ") + std::string(n);
    throw ValueError(fmt::format("Unknown dispatch key '{}'. Known keys: {}", name, known));
  }
  return *k;
}

void register_privateuse1_backend(std::string_view name) {
  static constexpr std::array<std::string_view, 3> kBuiltIn = {"cpu", "cuda", "meta"};
  OPD_CHECK_T(ValueError, !name.empty(), "register_privateuse1_backend: the name is empty");
  for (auto b : kBuiltIn) {
    OPD_CHECK_T(ValueError, name != b,
                "register_privateuse1_backend: cannot name the PrivateUse1 backend '{}': that is "
                "the built-in device '{}' (built-in devices: cpu, cuda, meta)",
                name, b);
  }
  // A slot held by a plugin's claim counts as named (Note [Vendor slots] in opd/privateuse.h).
  PrivateUseSlots& t = privateuse_slots();
  MutexLock lock(t.mutex);
  detail::PrivateUseSlot& slot = t.slots[0];
  const std::string held = slot.taken() ? slot.name : std::string();
  if (held == name) return;
  OPD_CHECK_T(ValueError, held.empty(),
              "register_privateuse1_backend: the PrivateUse1 backend is already named '{}'; it "
              "cannot be renamed to '{}'",
              held, name);
  for (int i = 1; i < kNumPrivateUseSlots; ++i) {
    OPD_CHECK_T(ValueError, !t.slots[i].taken() || t.slots[i].name != name,
                "register_privateuse1_backend: '{}' is the name of vendor slot PrivateUse{} ({})",
                name, i + 1, t.slots[i].holder());
    OPD_CHECK_T(ValueError, name != default_privateuse_name(i),
                "register_privateuse1_backend: '{}' is the unnamed PrivateUse{} slot's own name",
                name, i + 1);
  }
  slot = detail::PrivateUseSlot{};
  slot.name = name;
  slot.named_by_process = true;
}

std::string privateuse1_backend_name() { return privateuse_backend_name(DeviceType::PrivateUse1); }

std::string privateuse_backend_name(DeviceType slot) {
  const int i = privateuse_slot_index(slot);
  PrivateUseSlots& t = privateuse_slots();
  MutexLock lock(t.mutex);
  return t.slots[i].taken() ? t.slots[i].name : default_privateuse_name(i);
}

std::optional<DeviceType> privateuse_slot_named(std::string_view name) {
  PrivateUseSlots& t = privateuse_slots();
  MutexLock lock(t.mutex);
  for (int i = 0; i < kNumPrivateUseSlots; ++i) {
    if (name == default_privateuse_name(i) || (t.slots[i].taken() && name == t.slots[i].name)) {
      return privateuse_slot_at(i);
    }
  }
  return std::nullopt;
}

std::string display_name(DispatchKey key) {
  const std::optional<DeviceType> slot = privateuse_slot_of(key);
  if (!slot) return to_string(key);
  std::string backend;
  {
    PrivateUseSlots& t = privateuse_slots();
    MutexLock lock(t.mutex);
    const detail::PrivateUseSlot& s = t.slots[privateuse_slot_index(*slot)];
    if (!s.taken()) return to_string(key);
    backend = upper(s.name);
  }
  return is_backend_key(key) ? backend : "Autograd" + backend;
}

}  // namespace opd
