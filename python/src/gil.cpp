// Note [Python lifetime]
// 1. C++ objects that own Python references (Python kernels, storages over numpy buffers) are
//    destroyed wherever their last owner lets go: a thread with or without the GIL, inside the
//    dispatcher's reclamation (after its registration lock), or after the interpreter is gone.
//    release_pyobject() therefore never waits: it decrefs at once when this thread holds the GIL,
//    leaks once finalization began, and otherwise queues the reference for drain_releases(),
//    which Py_AddPendingCall schedules and the bindings that hold the GIL also run.
// 2. At exit the package's atexit handler (which runs while the interpreter is whole) calls
//    _C._begin_shutdown(): Python kernels called from then on raise instead of taking the GIL,
//    so no C++ thread calls PyGILState_Ensure during finalization (which 3.11 answers by hanging
//    or ending the thread); the kernels already running are waited for, without the GIL. The
//    handler then closes every live Library, so the dispatcher holds no Python kernel after
//    exit. Plugins are not unloaded at exit.
// 3. No C++ object with static or thread storage duration owns a py::object (its destructor
//    would run after finalization): the dtype objects are a leaked table.

#include "gil.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "opd/error.h"

namespace opd::python {
namespace {

std::atomic<bool> g_shutting_down{false};
std::atomic<int> g_running{0};  // callbacks between their check and their return

std::mutex g_queue_mutex;  // never held while waiting for the GIL or calling Python
std::vector<std::pair<void (*)(void*), void*>> g_queue;
std::atomic<bool> g_queue_nonempty{false};

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

int drain_pending(void*) {
  drain_releases();
  return 0;
}

void decref(void* o) { Py_DECREF(static_cast<PyObject*>(o)); }

}  // namespace

void release_pyobject(PyObject* o) noexcept {
  if (o != nullptr) run_with_gil_later(&decref, o);
}

void run_with_gil_later(void (*fn)(void*), void* ctx) noexcept {
  run_with_gil_later(fn, ctx, nullptr);
}

void run_with_gil_later(void (*fn)(void*), void* ctx, void (*discard)(void*)) noexcept {
  if (interpreter_finalizing()) {
    if (discard != nullptr) discard(ctx);
    return;
  }
  if (PyGILState_Check()) {
    fn(ctx);
    return;
  }
  try {
    std::lock_guard<std::mutex> lock(g_queue_mutex);
    g_queue.emplace_back(fn, ctx);
  } catch (...) {
    return;  // out of memory: leak rather than touch Python without the GIL
  }
  if (!g_queue_nonempty.exchange(true)) Py_AddPendingCall(&drain_pending, nullptr);
}

void drain_releases() {
  if (!g_queue_nonempty.load(std::memory_order_relaxed)) return;
  std::vector<std::pair<void (*)(void*), void*>> pending;
  {
    std::lock_guard<std::mutex> lock(g_queue_mutex);
    pending.swap(g_queue);
    g_queue_nonempty.store(false);
  }
  for (auto [fn, ctx] : pending) fn(ctx);
}

bool CallbackGil::enter() {
  g_running.fetch_add(1);
  if (g_shutting_down.load() || interpreter_finalizing()) {
    g_running.fetch_sub(1);
    return false;
  }
  state_ = PyGILState_Ensure();
  drain_releases();
  return true;
}

void CallbackGil::throw_shutting_down(const std::string& what) {
  throw Error(what + " cannot run: the Python interpreter is shutting down");
}

CallbackGil::~CallbackGil() {
  PyGILState_Release(state_);
  g_running.fetch_sub(1);
}

int begin_shutdown(int timeout_ms) {
  g_shutting_down.store(true);
  Py_BEGIN_ALLOW_THREADS;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (g_running.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Py_END_ALLOW_THREADS;
  drain_releases();
  return g_running.load();
}

}  // namespace opd::python
