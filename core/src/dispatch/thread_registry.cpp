#include "opd/thread_registry.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "logging.h"
#include "opd/dispatcher.h"

namespace opd::detail {

OPD_API constinit thread_local ThreadCallCounter tls_call_counter
    __attribute__((tls_model("initial-exec")));

namespace {

struct Registry {
  std::mutex mutex;
  struct Entry {
    ThreadCallCounter* state;
    uint64_t id;
  };
  std::vector<Entry> threads;  // guarded by mutex
  uint64_t next_id = 1;        // guarded by mutex
};

Registry& registry() {
  static auto* r = new Registry();  // leaked: threads may exit during static destruction
  return *r;
}

// Removes the thread from the registry when it exits. Separate from ThreadCallCounter so that
// the hot state stays trivially destructible (no TLS wrapper on the dispatch path).
struct ThreadExit {
  ThreadCallCounter* state = nullptr;
  ~ThreadExit() {
    if (!state) return;
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    std::erase_if(r.threads, [&](const Registry::Entry& e) { return e.state == state; });
  }
};
thread_local ThreadExit thread_exit;

// Orders every running thread's earlier stores before our later loads: a membarrier makes the
// plain store of a reader's call counter visible without the reader paying for a fence.
bool asymmetric_fence() {
#if defined(__SANITIZE_THREAD__)
  // Under ThreadSanitizer the readers use sequentially consistent operations instead.
  return true;
#else
  static const bool registered =
      syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  if (!registered || syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      logger()->warn(
          "membarrier(PRIVATE_EXPEDITED) is unavailable; replaced kernels and erased "
          "operators are kept until exit");
    });
    return false;
  }
  return true;
#endif
}

}  // namespace

void register_dispatch_thread() {
  auto& state = tls_call_counter;
  if (state.registered) return;
  auto& r = registry();
  {
    std::lock_guard lock(r.mutex);
    r.threads.push_back({&state, r.next_id++});
  }
  thread_exit.state = &state;
  state.registered = true;
}

QuiescenceSnapshot take_quiescence_snapshot() {
  QuiescenceSnapshot snap;
  if (!asymmetric_fence()) return snap;
  snap.valid = true;
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& t : r.threads) {
    uint64_t calls = t.state->calls.load(std::memory_order_acquire);
    if (calls & CallScope::kDepthMask) snap.busy.push_back({t.id, calls});
  }
  return snap;
}

bool has_passed(const QuiescenceSnapshot& snap) {
  if (!snap.valid) return false;
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& busy : snap.busy) {
    auto it = std::find_if(r.threads.begin(), r.threads.end(),
                           [&](const Registry::Entry& e) { return e.id == busy.id; });
    if (it == r.threads.end()) continue;  // the thread exited
    uint64_t now = it->state->calls.load(std::memory_order_acquire);
    // Its depth returned to zero at least once since: the calls it was running are over.
    if ((now >> 16) == (busy.calls >> 16)) return false;
  }
  return true;
}

}  // namespace opd::detail
