// opdispatch.trace(): records every dispatch hop made on the thread that opened it, as the
// lines `opd eval --trace` prints (the same code: eval::format_hop) and as objects. The
// observer runs on dispatching threads without the GIL and never touches Python. While a trace
// records it is the process's dispatch observer; the one installed before comes back when it
// stops (traces nest as with-blocks do).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bindings.h"
#include "eval_trace.h"
#include "opd/dispatch_observer.h"
#include "opd/operator_handle.h"

namespace py = pybind11;
namespace eval = opd::cli::eval;

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

class Recorder final : public DispatchObserver {
 public:
  explicit Recorder(std::thread::id thread) : thread_(thread) {}

  void on_enter(const DispatchHop& hop) override {
    if (std::this_thread::get_id() != thread_) return;
    KernelOrigin origin = kernel_origin(hop);
    Hop h{hop.op.operator_name().to_string(),
          to_string(hop.entry),
          hop.keys.to_string(),
          to_string(hop.key),
          origin.source,
          origin.debug,
          origin.plugin,
          hop.depth,
          false,
          std::string(2 * static_cast<size_t>(hop.depth), ' ') + eval::format_hop(hop, origin)};
    std::lock_guard<std::mutex> lock(mutex_);
    hops_.push_back(std::move(h));
  }
  void on_exit(const DispatchHop& hop, bool threw) override {
    if (!threw || std::this_thread::get_id() != thread_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    Hop h{hop.op.operator_name().to_string(),
          to_string(hop.entry),
          hop.keys.to_string(),
          to_string(hop.key),
          "",
          "",
          "",
          hop.depth,
          true,
          std::string(2 * static_cast<size_t>(hop.depth), ' ') + eval::format_raised(hop)};
    hops_.push_back(std::move(h));
  }
  std::vector<Hop> hops() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return hops_;
  }

 private:
  std::thread::id thread_;
  mutable std::mutex mutex_;
  std::vector<Hop> hops_;
};

class Trace {
 public:
  void start() {
    OPD_CHECK(!guard_, "opdispatch.trace: this trace is already recording");
    recorder_ = std::make_shared<Recorder>(std::this_thread::get_id());
    guard_.emplace(recorder_);
  }
  void stop() { guard_.reset(); }
  std::vector<Hop> hops() const { return recorder_ ? recorder_->hops() : std::vector<Hop>{}; }

 private:
  std::shared_ptr<Recorder> recorder_;
  std::optional<DispatchObserverGuard> guard_;
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
