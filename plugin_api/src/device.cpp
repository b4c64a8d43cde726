#include "opd/device.h"

#include <cctype>
#include <charconv>
#include <mutex>
#include <set>

#include "opd/dispatch_key.h"

namespace opd {
namespace {

// device_type_name() hands out `const char*` while a vendor slot's name is only known at run
// time, so the names it has returned are kept here for the life of the process. The set is
// leaked on purpose: callers may print a device from a static destructor.
const char* intern(std::string name) {
  static std::mutex mutex;
  static auto* names = new std::set<std::string>();
  std::lock_guard lock(mutex);
  return names->insert(std::move(name)).first->c_str();
}

DeviceType parse_type(std::string_view name) {
  if (name == "cpu") return DeviceType::CPU;
  if (name == "cuda") return DeviceType::CUDA;
  if (name == "meta") return DeviceType::Meta;
  if (auto slot = privateuse_slot_named(name)) return *slot;
  // PyTorch lists its built-in names only; the registered vendor names are not among them.
  throw ValueError(fmt::format(
      "Expected one of cpu, cuda, meta, privateuseone device type at start of device string: {}",
      name));
}

}  // namespace

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU:
      return "cpu";
    case DeviceType::CUDA:
      return "cuda";
    case DeviceType::Meta:
      return "meta";
    case DeviceType::PrivateUse1:
    case DeviceType::PrivateUse2:
    case DeviceType::PrivateUse3:
      return intern(privateuse_backend_name(t));
  }
  return "unknown";
}

// The grammar of c10::Device(const std::string&): a name of letters and underscores, then
// optionally ':' and a decimal index without leading zeros.
Device::Device(std::string_view text) : type(DeviceType::CPU), index(-1) {
  OPD_CHECK_T(ValueError, !text.empty(), "Device string must not be empty");
  size_t colon = text.find(':');
  std::string_view name = text.substr(0, colon);
  bool ok = !name.empty();
  for (char c : name) {
    ok = ok && (std::isalpha(static_cast<unsigned char>(c)) || c == '_');
  }
  std::string_view digits;
  if (colon != std::string_view::npos) {
    digits = text.substr(colon + 1);
    ok = ok && !digits.empty() && (digits.size() == 1 || digits[0] != '0');
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
  }
  OPD_CHECK_T(ValueError, ok, "Invalid device string: '{}'", text);
  if (!digits.empty()) {
    int value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    OPD_CHECK_T(ValueError, ec == std::errc() && value <= INT8_MAX,
                "Could not parse device index '{}' in device string '{}'", digits, text);
    index = static_cast<int8_t>(value);
  }
  type = parse_type(name);
  validate();
}

std::string Device::str() const {
  if (index == -1) return device_type_name(type);
  return fmt::format("{}:{}", device_type_name(type), static_cast<int>(index));
}

}  // namespace opd
