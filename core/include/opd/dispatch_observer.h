#pragma once

// Watching the dispatcher: every call, redispatch, boxed call and boxed redispatch can be
// reported to one process-wide observer (`opd eval --trace`, profilers, tests that assert which
// kernel served a call). With no observer installed, each call path pays one load of a global
// flag and one never-taken branch; see Note [Observed dispatch] in dispatch_observer.cpp.

#include <atomic>
#include <memory>
#include <string>

#include "opd/dispatch_key_set.h"
#include "opd/export.h"

namespace opd {

class OperatorHandle;
class KernelFunction;

// How a hop entered the dispatcher.
enum class DispatchEntry : uint8_t { Call, Redispatch, CallBoxed, RedispatchBoxed };

// "call", "redispatch", "call_boxed", "redispatch_boxed".
OPD_API const char* to_string(DispatchEntry e);

// One dispatch: the operator, the key set it dispatched on (arguments and thread-local sets,
// masked by the operator's fallthroughs; for a redispatch, the caller's set masked) and the key
// that chose the kernel. Valid only during on_enter/on_exit.
struct DispatchHop {
  const OperatorHandle& op;
  DispatchKeySet keys;
  DispatchKey key;  // keys.highest_priority_key(); Undefined when the set is empty
  DispatchEntry entry;
  const KernelFunction& kernel;  // the table entry that runs
  int depth;                     // 0 for an outermost call, +1 per nested hop on this thread

  bool boxed() const {
    return entry == DispatchEntry::CallBoxed || entry == DispatchEntry::RedispatchBoxed;
  }
  bool is_redispatch() const {
    return entry == DispatchEntry::Redispatch || entry == DispatchEntry::RedispatchBoxed;
  }
};

// Where the kernel of a hop was registered, read from the dispatcher (takes its registration
// mutex, so never call it while registering).
struct KernelOrigin {
  // "registered at plugins/cpu/binary_ops.cpp:42 (plugin cpu 0.1.0)"; "missing" when no kernel
  // serves the key (the call is about to raise the missing-kernel error).
  std::string debug;
  // "cpu 0.1.0" when a plugin registered it; empty for executables and the core.
  std::string plugin;
  // Why this kernel serves the key, as dump_computed_table() says it: "kernel", "default backend
  // kernel", "math kernel", "autograd kernel", "backend fallback", "missing".
  std::string source;
};
OPD_API KernelOrigin kernel_origin(const DispatchHop& hop);

// "cpu 0.1.0" from a debug string ending in " (plugin cpu 0.1.0)"; empty otherwise.
OPD_API std::string plugin_of_debug(const std::string& debug);

// Receives the hops of every thread. on_enter runs before the kernel, on_exit after it returned
// or threw (`threw`), both on the dispatching thread, nested in the order of the calls.
// Implementations must be thread-safe when several threads dispatch, and must not register or
// deregister from inside a callback. Calls the observer itself makes are observed too.
class OPD_API DispatchObserver {
 public:
  virtual ~DispatchObserver();
  virtual void on_enter(const DispatchHop& hop) = 0;
  virtual void on_exit(const DispatchHop& hop, bool threw) {}
};

// Installs `observer` (null: none) for the guard's lifetime; on destruction the observer that
// was installed before comes back. Guards nest: destroy them in reverse order of creation.
// A call already inside on_enter/on_exit when the guard goes keeps its own reference, so the
// observer lives until that callback returns. Thread-safe.
class OPD_API DispatchObserverGuard {
 public:
  explicit DispatchObserverGuard(std::shared_ptr<DispatchObserver> observer);
  ~DispatchObserverGuard();
  DispatchObserverGuard(const DispatchObserverGuard&) = delete;
  DispatchObserverGuard& operator=(const DispatchObserverGuard&) = delete;

 private:
  std::shared_ptr<DispatchObserver> previous_;
};

[[nodiscard]] inline DispatchObserverGuard set_dispatch_observer(
    std::shared_ptr<DispatchObserver> observer) {
  return DispatchObserverGuard(std::move(observer));
}

namespace detail {

// True while an observer is installed. Read on every dispatch (relaxed: a call racing with the
// installation may or may not be observed).
extern OPD_API std::atomic<bool> g_dispatch_observed;

inline bool dispatch_observed() { return g_dispatch_observed.load(std::memory_order_relaxed); }

// Reports a hop to the observer for its lifetime: on_enter in the constructor, on_exit in the
// destructor. Used by the slow path of the dispatcher's call functions only.
class OPD_API ObservedHop {
 public:
  ObservedHop(const OperatorHandle& op, DispatchKeySet keys, DispatchEntry entry,
              const KernelFunction& kernel);
  ~ObservedHop();
  ObservedHop(const ObservedHop&) = delete;
  ObservedHop& operator=(const ObservedHop&) = delete;

 private:
  std::shared_ptr<DispatchObserver> observer_;  // null when none was installed after all
  DispatchHop hop_;
  int uncaught_;
};

}  // namespace detail

}  // namespace opd
