#include "opd/dispatch_key.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "opd/error.h"
#include "opd/thread_annotations.h"

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

constexpr int kNumSlots = 3;
constexpr std::array<const char*, kNumSlots> kDefaultSlotNames = {"privateuseone", "privateusetwo",
                                                                  "privateusethree"};

// The vendor slots' registered names; empty until registered.
struct SlotNames {
  Mutex mutex;
  std::array<std::string, kNumSlots> names OPD_GUARDED_BY(mutex);
};
SlotNames& slot_names() {
  static SlotNames* s = new SlotNames();  // leaked: names are read from static destructors
  return *s;
}
int slot_index(DeviceType slot) {
  OPD_CHECK_T(ValueError, is_privateuse(slot), "device type {} is not a vendor slot",
              static_cast<int>(slot));
  return static_cast<int>(slot) - static_cast<int>(DeviceType::PrivateUse1);
}

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
  SlotNames& s = slot_names();
  MutexLock lock(s.mutex);
  std::string& held = s.names[0];
  if (held == name) return;
  OPD_CHECK_T(ValueError, held.empty(),
              "register_privateuse1_backend: the PrivateUse1 backend is already named '{}'; it "
              "cannot be renamed to '{}'",
              held, name);
  held = name;
}

std::string privateuse1_backend_name() { return privateuse_backend_name(DeviceType::PrivateUse1); }

std::string privateuse_backend_name(DeviceType slot) {
  const int i = slot_index(slot);
  SlotNames& s = slot_names();
  MutexLock lock(s.mutex);
  return s.names[i].empty() ? kDefaultSlotNames[i] : s.names[i];
}

std::optional<DeviceType> privateuse_slot_named(std::string_view name) {
  SlotNames& s = slot_names();
  MutexLock lock(s.mutex);
  for (int i = 0; i < kNumSlots; ++i) {
    if (name == kDefaultSlotNames[i] || (!s.names[i].empty() && name == s.names[i])) {
      return static_cast<DeviceType>(static_cast<int>(DeviceType::PrivateUse1) + i);
    }
  }
  return std::nullopt;
}

std::string display_name(DispatchKey key) {
  const std::optional<DeviceType> slot = privateuse_slot_of(key);
  if (!slot) return to_string(key);
  std::string backend;
  {
    SlotNames& s = slot_names();
    MutexLock lock(s.mutex);
    const std::string& name = s.names[slot_index(*slot)];
    if (name.empty()) return to_string(key);
    backend = upper(name);
  }
  return is_backend_key(key) ? backend : "Autograd" + backend;
}

}  // namespace opd
