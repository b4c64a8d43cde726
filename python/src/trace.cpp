// opdispatch.trace(): records every dispatch hop made on the thread that opened it, as the
// lines `opd eval --trace` prints (the same code: bind::format_hop) and as objects. One
// process-wide observer serves every open trace: it is installed when the first trace opens and
// removed when the last one closes, and hands each hop to the traces open on the dispatching
// thread (a thread-local list), so traces on different threads, and nested traces on one, each
// see all their thread's hops. The observer runs on dispatching threads without the GIL and
// never touches Python. While traces are open it is the process's dispatch observer (one that
// C++ installed before comes back when the last trace closes).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "opd/bind/trace_lines.h"
#include "opd/dispatch_observer.h"
#include "opd/operator_handle.h"
#include "opd/thread_annotations.h"

namespace py = pybind11;

namespace opd::python {
namespace {

struct Hop {
  std::string op;      // "aten::add.Tensor"
  std::string entry;   // "call", "redispatch", "call_boxed", "redispatch_boxed"
  std::string keys;    // "DispatchKeySet(CPU, AutogradCPU)"
  std::string key;     // "AutogradCPU"
  std::string source;  // "autograd kernel", "kernel", "backend fallback", "missing", ...
  std::string debug;   // "registered at ..."
  std::string plugin;  // "cpu 0.1.0", or ""
  int depth;
  bool raised = false;
  std::string line;  // as opd eval --trace prints it, indented by depth
};

// What one trace recorded. Written by the thread that opened it, read by any.
class Recorder {
 public:
  void add(Hop h) {
    std::lock_guard<std::mutex> lock(mutex_);
    hops_.push_back(std::move(h));
  }
  std::vector<Hop> hops() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return hops_;
  }
  std::atomic<bool> open{true};

 private:
  mutable std::mutex mutex_;
  std::vector<Hop> hops_;
};

// The traces open on this thread, outermost first; closed ones are dropped on the next hop.
thread_local std::vector<std::shared_ptr<Recorder>> t_recorders;

class Multiplexer final : public DispatchObserver {
 public:
  void on_enter(const DispatchHop& hop) override {
    if (!prune()) return;
    KernelOrigin origin = kernel_origin(hop);
    std::string text = bind::format_hop(hop, origin);  // before origin is moved from
    record(hop, text, std::move(origin), false);
  }
  void on_exit(const DispatchHop& hop, bool threw) override {
    if (!threw || !prune()) return;
    record(hop, bind::format_raised(hop), KernelOrigin{}, true);
  }

 private:
  // Hands the hop, `text` being its line without indentation, to this thread's open traces.
  static void record(const DispatchHop& hop, const std::string& text, KernelOrigin origin,
                     bool raised) {
    Hop h{hop.op.operator_name().to_string(),
          to_string(hop.entry),
          hop.keys.to_string(),
          to_string(hop.key),
          std::move(origin.source),
          std::move(origin.debug),
          std::move(origin.plugin),
          hop.depth,
          raised,
          std::string(2 * static_cast<size_t>(hop.depth), ' ') + text};
    for (const auto& r : t_recorders) r->add(h);
  }

  // Drops this thread's closed traces; true when one is still open.
  static bool prune() {
    std::erase_if(t_recorders, [](const auto& r) { return !r->open.load(); });
    return !t_recorders.empty();
  }
};

Mutex g_observer_mutex;
int g_open_traces OPD_GUARDED_BY(g_observer_mutex) = 0;
DispatchObserverGuard* g_observer OPD_GUARDED_BY(g_observer_mutex) = nullptr;

class Trace {
 public:
  ~Trace() { stop(); }

  void start() {
    OPD_CHECK(!recorder_ || !recorder_->open.load(),
              "opdispatch.trace: this trace is already recording");
    OPD_CHECK(!recorder_, "opdispatch.trace: this trace was closed; open a new opdispatch.trace()");
    recorder_ = std::make_shared<Recorder>();
    t_recorders.push_back(recorder_);
    MutexLock lock(g_observer_mutex);
    if (g_open_traces++ == 0) {
      g_observer = new DispatchObserverGuard(std::make_shared<Multiplexer>());
    }
  }
  // Any thread (the garbage collector may close a trace on another one): the opening thread's
  // list drops it on its next hop.
  void stop() {
    if (!recorder_ || !recorder_->open.exchange(false)) return;
    MutexLock lock(g_observer_mutex);
    if (--g_open_traces == 0) {
      delete g_observer;
      g_observer = nullptr;
    }
  }
  std::vector<Hop> hops() const { return recorder_ ? recorder_->hops() : std::vector<Hop>{}; }

 private:
  std::shared_ptr<Recorder> recorder_;
};

}  // namespace

void bind_trace(py::module_& m) {
  py::class_<Hop>(m, "DispatchHop", py::module_local())
      .def_readonly("op", &Hop::op)
      .def_readonly("entry", &Hop::entry)
      .def_readonly("keys", &Hop::keys)
      .def_readonly("key", &Hop::key)
      .def_readonly("source", &Hop::source)
      .def_readonly("debug", &Hop::debug)
      .def_readonly("plugin", &Hop::plugin)
      .def_readonly("depth", &Hop::depth)
      .def_readonly("raised", &Hop::raised)
      .def_readonly("line", &Hop::line)
      .def("__repr__", [](const Hop& h) { return "<DispatchHop " + h.line + ">"; });
  py::class_<Trace>(m, "_Trace", py::module_local())
      .def(py::init<>())
      .def("start", &Trace::start, py::call_guard<py::gil_scoped_release>())
      .def("stop", &Trace::stop, py::call_guard<py::gil_scoped_release>())
      .def("hops", &Trace::hops);
}

}  // namespace opd::python
