#include "thread_registry.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "logging.h"
#include "opd/local_dispatch_key_set.h"

namespace opd::detail {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<ThreadDispatchState*> threads;  // guarded by mutex
};

Registry& registry() {
  static auto* r = new Registry();  // leaked: threads may exit during static destruction
  return *r;
}

// Removes the thread from the registry when it exits. Separate from ThreadDispatchState so that
// the hot state stays trivially destructible (no TLS wrapper on the dispatch path).
struct ThreadExit {
  ThreadDispatchState* state = nullptr;
  ~ThreadExit() {
    if (!state) return;
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    std::erase(r.threads, state);
  }
};
thread_local ThreadExit thread_exit;

// Orders every running thread's earlier stores before our later loads: a membarrier makes the
// plain store of a reader's depth counter visible without the reader paying for a fence.
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
      logger()->warn("membarrier(PRIVATE_EXPEDITED) is unavailable; replaced kernels and erased "
                     "operators are kept until exit");
    });
    return false;
  }
  return true;
#endif
}

}  // namespace

void register_dispatch_thread() {
  auto& state = tls_dispatch_state;
  if (state.registered) return;
  auto& r = registry();
  {
    std::lock_guard lock(r.mutex);
    r.threads.push_back(&state);
  }
  thread_exit.state = &state;
  state.registered = true;
}

bool no_dispatch_in_flight() {
  if (!asymmetric_fence()) return false;
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  return std::all_of(r.threads.begin(), r.threads.end(), [](ThreadDispatchState* s) {
    return s->depth.load(std::memory_order_acquire) == 0;
  });
}

}  // namespace opd::detail
