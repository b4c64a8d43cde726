#include "opd/dispatch_key.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>

#include "opd/error.h"

namespace opd {
namespace {

constexpr std::array<const char*, kNumDispatchKeys> kKeyNames = {
    "Undefined",
    "CPU",
    "CUDA",
    "PrivateUse1",
    "Meta",
    "ADInplaceOrView",
    "AutogradCPU",
    "AutogradCUDA",
    "AutogradPrivateUse1",
    "AutogradMeta",
    "Tracer",
    "Dense",
    "AutogradFunctionality",
    "Autograd",
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
};

std::mutex privateuse1_mutex;
std::string privateuse1_name;  // empty until registered; guarded by privateuse1_mutex

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

bool is_privateuse1_key(DispatchKey k) {
  return k == DispatchKey::PrivateUse1 || k == DispatchKey::AutogradPrivateUse1;
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
  for (auto k : {DispatchKey::PrivateUse1, DispatchKey::AutogradPrivateUse1}) {
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
  std::lock_guard lock(privateuse1_mutex);
  if (privateuse1_name == name) return;
  OPD_CHECK_T(ValueError, privateuse1_name.empty(),
              "register_privateuse1_backend: the PrivateUse1 backend is already named '{}'; it "
              "cannot be renamed to '{}'",
              privateuse1_name, name);
  privateuse1_name = name;
}

std::string privateuse1_backend_name() {
  std::lock_guard lock(privateuse1_mutex);
  return privateuse1_name.empty() ? "privateuseone" : privateuse1_name;
}

std::string display_name(DispatchKey key) {
  if (!is_privateuse1_key(key)) return to_string(key);
  std::string backend;
  {
    std::lock_guard lock(privateuse1_mutex);
    if (privateuse1_name.empty()) return to_string(key);
    backend = upper(privateuse1_name);
  }
  return key == DispatchKey::PrivateUse1 ? backend : "Autograd" + backend;
}

}  // namespace opd
