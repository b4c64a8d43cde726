#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "plugins/plugin_library.h"

namespace opd {

// Note [Threads left running]
// A plugin's shutdown hook must stop every thread the plugin started (opd/plugin.h). One that
// does not would crash the host when its library is unmapped under the thread. So before a
// library's last reference closes it, the manager looks for such threads among the threads of
// the process (/proc/self/task) that did not exist before the library was first mapped, the
// closing thread excepted:
//   - a thread blocked in the kernel is inspected: its live stack (from its stack pointer in
//     /proc/self/task/TID/syscall up to the end of its stack mapping, read through
//     /proc/self/mem) is searched for an address inside the library's executable segments (a
//     return address of one of the plugin's frames);
//   - a thread that is running cannot be inspected: it is counted if it appeared while the
//     plugin's registration (or its static initialisers and those of the libraries it pulled
//     in) ran and is not seen blocked within 250 ms (OpenBLAS's workers spin before they block);
//     a running thread that appeared later is taken for the host's.
// If any is found, the library is never closed: it stays resident, with a reason naming how
// many threads were left running. The check errs on the safe side for threads it can see (a host
// thread started during the registration, or blocked with a stale address of the plugin in a
// live frame, keeps the library mapped needlessly); what it cannot see is a thread the plugin
// started after its registration that is computing without pause at that instant.

// The process's threads (their TIDs), from /proc/self/task.
std::set<pid_t> process_threads();

// A plugin library as the plugin's registrations and objects reference it (the registration
// context's `owner`). One per load; its last reference closes the library, unless threads left
// running may execute its code (Note [Threads left running]): then it is kept for good and
// `on_kept` is called with the reason.
struct LibraryOwner {
  std::shared_ptr<PluginLibrary> library;
  // Set by the manager before the owner is shared; called from whichever thread drops the last
  // reference.
  PluginLibrary::ClosedFn on_kept;
  // Where the loader mapped it: loads answered with the same mapping share this address.
  uintptr_t mapping_base = 0;
  // 1 for the mapping's first load, then 2...: owners sharing a mapping close in this order
  // (Note [Loads sharing a mapping] in plugin_residency.cpp).
  uint64_t load_order = 0;
};

// Owns `library`, whose entry point is `entry_point` (any address in its code), opened when the
// process's threads were `threads_before`. Several loads of one still-mapped library (the loader
// hands back the same mapping) share the threads of the first.
std::shared_ptr<LibraryOwner> own_library(std::shared_ptr<PluginLibrary> library,
                                          const void* entry_point, std::set<pid_t> threads_before);

// Tells the owner's mapping which threads exist once its registration has run (only the first
// load of a mapping counts).
void registration_ran(const LibraryOwner& owner, const std::set<pid_t>& threads_now);

}  // namespace opd
