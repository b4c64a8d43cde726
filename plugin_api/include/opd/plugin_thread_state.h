#pragma once

// Per-thread state for plugins, kept in libopd_core.so as PyTorch keeps autograd's thread state
// in c10 (AutogradState) rather than in a loadable library.
//
// Note [Thread state of plugins]
// A plugin is dlopen'ed, so a thread_local of its own lives in dynamic TLS: every access is a
// __tls_get_addr call, and LeakSanitizer, which tracks dynamic TLS blocks by intercepting that
// call, was seen to crash at exit on its record of the autograd plugin's block (`opd demo` under
// ASan, depending on the working directory). The initial-exec model avoids both, but a plugin's
// initial-exec TLS takes room in the static TLS block that glibc does not always give back at
// dlclose, so that reloading the plugin a few hundred times fails with "cannot allocate memory
// in static TLS block". The core is linked by the executable, never unloaded: its thread-locals
// are in the static block, read with one %fs-relative load, and survive plugin reloads.
//
// So the core holds kPluginThreadStateSlots slots of kPluginThreadStateBytes per thread, and a
// plugin claims one by name (PluginThreadState<T>). A name keeps its slot for the life of the
// process, so a reloaded plugin finds on each thread what its previous load left there, and no
// other plugin ever sees those bytes. Every slot is zero on a new thread. The state may not hold
// pointers into the plugin's code or data across calls: they would dangle after an unload (the
// autograd plugin sets its pointers only while one of its calls runs on the thread).

#include <cstddef>
#include <new>
#include <string_view>
#include <type_traits>

#include "opd/export.h"

namespace opd {

// Small on purpose: when libopd_core.so is itself dlopened (as the dependency of Python's
// opdispatch._C), its initial-exec TLS comes out of glibc's static TLS surplus, 512 bytes by
// default and shared with every other late-loaded library that uses that model (libgomp, which
// torch loads, takes 136). The core's whole TLS segment is under 200 bytes with these slots.
inline constexpr size_t kPluginThreadStateBytes = 32;
inline constexpr int kPluginThreadStateSlots = 4;

namespace detail {

struct alignas(16) PluginThreadStateSlot {
  std::byte bytes[kPluginThreadStateBytes] = {};
};

extern OPD_API constinit thread_local PluginThreadStateSlot
    tls_plugin_thread_state[kPluginThreadStateSlots] __attribute__((tls_model("initial-exec")));

// The slot of `owner` (a plugin's name), claimed on its first call. Throws opd::Error when all
// slots are held by other names, naming them.
OPD_API int claim_plugin_thread_state_slot(std::string_view owner);

}  // namespace detail

// A plugin's per-thread T, in the slot its name holds: declare one at namespace scope (constant
// initialised, no slot yet) and claim() it in the plugin's OPD_PLUGIN block, where running out
// of slots fails the load with the manager's PluginError instead of terminating inside dlopen;
// get() is valid after that. T is trivially copyable and destructible, and all-zero bytes are
// its initial value (the slot is zero on a new thread).
template <class T>
class PluginThreadState {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "a plugin's thread state is plain data: it is never constructed nor destroyed");
  static_assert(sizeof(T) <= kPluginThreadStateBytes && alignof(T) <= 16,
                "a plugin's thread state fits one slot (kPluginThreadStateBytes, 16-aligned)");

 public:
  constexpr PluginThreadState() = default;
  explicit PluginThreadState(std::string_view owner) { claim(owner); }

  // Takes the slot of `owner` (the plugin's name); the same slot for every load of that name.
  // Throws opd::Error, naming the holders, when all slots are held by other names.
  void claim(std::string_view owner) { slot_ = detail::claim_plugin_thread_state_slot(owner); }

  // This thread's T. One %fs-relative address computation.
  T& get() const {
    return *std::launder(reinterpret_cast<T*>(detail::tls_plugin_thread_state[slot_].bytes));
  }
  int slot() const { return slot_; }

 private:
  int slot_ = -1;
};

}  // namespace opd
