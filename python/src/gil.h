#pragma once

// Python's lifetime as seen from C++ threads (gil.cpp): see Note [Python lifetime].

#include <Python.h>

#include <string>
#include <type_traits>

namespace opd::python {

// Drops a reference from any thread, never waiting for the GIL: at once when this thread holds
// it, queued for the next drain otherwise, leaked once the interpreter is finalizing.
void release_pyobject(PyObject* o) noexcept;
// The same for any work that needs the GIL: fn(ctx) runs at once when this thread holds it,
// later (queued) otherwise, never once the interpreter is finalizing.
void run_with_gil_later(void (*fn)(void*), void* ctx) noexcept;
// As above; once the interpreter is finalizing, discard(ctx) runs instead of nothing: it frees
// what needs no Python (a tensor freed by the interpreter's teardown would leak its C++ holder
// otherwise) and leaves the Python objects ctx refers to, as the interpreter leaves its own.
void run_with_gil_later(void (*fn)(void*), void* ctx, void (*discard)(void*)) noexcept;
// Runs the queued work. REQUIRES: the GIL is held.
void drain_releases();

// Taken by C++ code that is about to run Python code on any thread (a Python kernel). Throws
// opd::Error "<what> cannot run: the Python interpreter is shutting down" once
// shutdown began, instead of taking the GIL (which would hang or end the thread during
// finalization). Otherwise holds the GIL for its scope.
class CallbackGil {
 public:
  explicit CallbackGil(const std::string& what) : CallbackGil([&] { return what; }) {}
  // `what()` makes the name for the error, only when there is one (a kernel's name is built
  // from its operator, key and site: a cost on every call otherwise).
  template <class What>
  requires std::is_invocable_r_v<std::string, const What&>
  explicit CallbackGil(const What& what) {
    if (!enter()) throw_shutting_down(what());
  }
  ~CallbackGil();
  CallbackGil(const CallbackGil&) = delete;
  CallbackGil& operator=(const CallbackGil&) = delete;

 private:
  // Takes the GIL, or returns false (not taking it) once shutdown began.
  bool enter();
  [[noreturn]] static void throw_shutting_down(const std::string& what);

  PyGILState_STATE state_;
};

// At exit (_C._begin_shutdown, from the package's atexit handler, with the GIL): from now on
// CallbackGil throws; waits (without the GIL, at most `timeout_ms`) for the callbacks already
// running to return. Returns how many were still running when it gave up.
int begin_shutdown(int timeout_ms);

// The deleter of a holder whose object undoes registrations when destroyed: that takes the
// registration mutex, never with the GIL held (Note [The GIL and the dispatcher's locks]).
// REQUIRES: the GIL, as every pybind11 holder's deleter runs with it.
template <class T>
struct ReleaseGilDeleter {
  void operator()(T* p) const {
    PyThreadState* state = PyEval_SaveThread();
    delete p;
    PyEval_RestoreThread(state);
  }
};

}  // namespace opd::python
