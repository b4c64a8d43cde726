#include "opd/plugin_thread_state.h"

#include <fmt/format.h>

#include <string>

#include "opd/error.h"
#include "opd/thread_annotations.h"

namespace opd::detail {

OPD_API constinit thread_local PluginThreadStateSlot
    tls_plugin_thread_state[kPluginThreadStateSlots] __attribute__((tls_model("initial-exec")));

namespace {
Mutex slots_mutex;
std::string slot_owners[kPluginThreadStateSlots] OPD_GUARDED_BY(slots_mutex);  // "": free
}  // namespace

int claim_plugin_thread_state_slot(std::string_view owner) {
  OPD_CHECK(!owner.empty(), "a plugin thread-state slot needs its owner's name");
  MutexLock lock(slots_mutex);
  int free = -1;
  for (int i = 0; i < kPluginThreadStateSlots; ++i) {
    if (slot_owners[i] == owner) return i;
    if (free < 0 && slot_owners[i].empty()) free = i;
  }
  if (free < 0) {
    std::string held;
    for (const std::string& name : slot_owners) held += (held.empty() ? "" : ", ") + name;
    throw Error(fmt::format("no per-thread state slot left for '{}': all {} are held ({})", owner,
                            kPluginThreadStateSlots, held));
  }
  slot_owners[free] = std::string(owner);
  return free;
}

}  // namespace opd::detail
