#include "opd/dispatch_observer.h"

#include <exception>
#include <mutex>

#include "opd/dispatcher.h"

namespace opd {

// Note [Observed dispatch]
// The call paths (TypedOperatorHandle::call/redispatch, OperatorHandle::call_boxed/
// redispatch_boxed) test g_dispatch_observed after looking the kernel up. The flag is a
// process-wide atomic read relaxed (a plain load on x86 and ARM), and the branch is marked
// unlikely and leads to an out-of-line, cold function, so with no observer the cost is one load
// and one never-taken branch. When the flag is set, the slow path takes the observer under a
// mutex (a shared_ptr copy: the observer outlives the callbacks even if its guard goes
// meanwhile) and reports the hop around the kernel call. The hop reports the kernel that was
// looked up, so the trace shows what really ran even while registrations change.

namespace detail {

constinit std::atomic<bool> g_dispatch_observed{false};

namespace {

std::mutex& observer_mutex() {
  static std::mutex m;
  return m;
}
// Guarded by observer_mutex(). Intentionally leaked: calls may be observed during static
// destruction.
std::shared_ptr<DispatchObserver>& current_observer() {
  static auto* o = new std::shared_ptr<DispatchObserver>();
  return *o;
}

std::shared_ptr<DispatchObserver> exchange_observer(std::shared_ptr<DispatchObserver> next) {
  std::lock_guard lock(observer_mutex());
  std::shared_ptr<DispatchObserver> previous = std::move(current_observer());
  g_dispatch_observed.store(next != nullptr, std::memory_order_relaxed);
  current_observer() = std::move(next);
  return previous;
}

std::shared_ptr<DispatchObserver> load_observer() {
  std::lock_guard lock(observer_mutex());
  return current_observer();
}

thread_local int tls_hop_depth = 0;

}  // namespace

ObservedHop::ObservedHop(const OperatorHandle& op, DispatchKeySet keys, DispatchEntry entry,
                         const KernelFunction& kernel)
    : observer_(load_observer()),
      hop_{op, keys, keys.highest_priority_key(), entry, kernel, tls_hop_depth},
      uncaught_(std::uncaught_exceptions()) {
  if (!observer_) return;
  ++tls_hop_depth;
  try {
    observer_->on_enter(hop_);
  } catch (...) {
    --tls_hop_depth;
    throw;
  }
}

ObservedHop::~ObservedHop() {
  if (!observer_) return;
  --tls_hop_depth;
  bool threw = std::uncaught_exceptions() > uncaught_;
  try {
    observer_->on_exit(hop_, threw);
  } catch (...) {
    // A destructor must not throw; an observer failing on exit loses that report only.
  }
}

}  // namespace detail

const char* to_string(DispatchEntry e) {
  switch (e) {
    case DispatchEntry::Call:
      return "call";
    case DispatchEntry::Redispatch:
      return "redispatch";
    case DispatchEntry::CallBoxed:
      return "call_boxed";
    case DispatchEntry::RedispatchBoxed:
      return "redispatch_boxed";
  }
  return "unknown";
}

std::string plugin_of_debug(const std::string& debug) {
  // Written by the plugin manager's registration context: " (plugin NAME VERSION)".
  static constexpr std::string_view kOpen = " (plugin ";
  if (debug.empty() || debug.back() != ')') return {};
  size_t at = debug.rfind(kOpen);
  if (at == std::string::npos) return {};
  size_t begin = at + kOpen.size();
  return debug.substr(begin, debug.size() - 1 - begin);
}

KernelOrigin kernel_origin(const DispatchHop& hop) {
  OperatorEntry::Origin o = hop.op.entry().origin_of(hop.key, hop.kernel);
  KernelOrigin out{std::move(o.debug), {}, o.source};
  out.plugin = plugin_of_debug(out.debug);
  return out;
}

DispatchObserver::~DispatchObserver() = default;

DispatchObserverGuard::DispatchObserverGuard(std::shared_ptr<DispatchObserver> observer)
    : previous_(detail::exchange_observer(std::move(observer))) {}

DispatchObserverGuard::~DispatchObserverGuard() { detail::exchange_observer(std::move(previous_)); }

}  // namespace opd
