#include "privateuse_slots.h"

#include <fmt/format.h>

#include "opd/error.h"

namespace opd::detail {

std::string PrivateUseSlot::holder() const {
  if (held_by_plugin()) return fmt::format("plugin '{}'", plugin);
  return named_by_process ? "the process" : "";
}

PrivateUseSlots& privateuse_slots() {
  static PrivateUseSlots* s = new PrivateUseSlots();
  return *s;
}

int privateuse_slot_index(DeviceType slot) {
  OPD_CHECK_T(ValueError, is_privateuse(slot), "device type {} is not a vendor slot",
              static_cast<int>(slot));
  return static_cast<int>(slot) - static_cast<int>(DeviceType::PrivateUse1);
}

const char* default_privateuse_name(int index) {
  static constexpr std::array<const char*, kNumPrivateUseSlots> kNames = {
      "privateuseone", "privateusetwo", "privateusethree"};
  return kNames.at(static_cast<size_t>(index));
}

}  // namespace opd::detail
