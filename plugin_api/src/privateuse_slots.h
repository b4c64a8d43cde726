#pragma once

// The vendor slots' table: who holds PrivateUse1..3 and under which name (Note [Vendor slots] in
// opd/privateuse.h). Read by the slot names (dispatch_key.cpp), written by the claims
// (privateuse.cpp) and by register_privateuse1_backend.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "opd/device_type.h"
#include "opd/thread_annotations.h"

namespace opd::detail {

constexpr int kNumPrivateUseSlots = 3;

struct PrivateUseSlot {
  std::string name;  // the last name given; meaningful while taken()
  // Named outside a plugin load (register_privateuse1_backend, a claim by the process): for good.
  bool named_by_process = false;
  // The plugin that claimed it, and the library owners of its loads that did (a reload adds
  // one); the plugin's hold lasts while any of them lives.
  std::string plugin;
  std::vector<std::weak_ptr<void>> loads;

  bool held_by_plugin() const {
    for (const auto& l : loads) {
      if (!l.expired()) return true;
    }
    return false;
  }
  bool taken() const { return named_by_process || held_by_plugin(); }
  // "plugin 'acme_device'", "the process", or "" when free.
  std::string holder() const;
};

struct PrivateUseSlots {
  Mutex mutex;
  std::array<PrivateUseSlot, kNumPrivateUseSlots> slots OPD_GUARDED_BY(mutex);
};

// The process's table (never destroyed: names are read from static destructors).
PrivateUseSlots& privateuse_slots();

// 0..2 for DeviceType::PrivateUse1..3; ValueError for another device type.
int privateuse_slot_index(DeviceType slot);
constexpr DeviceType privateuse_slot_at(int index) {
  return static_cast<DeviceType>(static_cast<int>(DeviceType::PrivateUse1) + index);
}

// "privateuseone", "privateusetwo", "privateusethree".
const char* default_privateuse_name(int index);

}  // namespace opd::detail
