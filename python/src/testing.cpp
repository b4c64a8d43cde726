// Helpers for the Python tests that need C++ threads: _C._test_call_from_threads calls an
// operator boxed from `threads` new C++ threads at once (`calls` times each), as a host
// program's threads or a plugin's workers would, and returns what each call raised (its
// message) or returned (its repr). The GIL is released while they run: a Python kernel among
// the callees takes it per call (Note [Python kernels]). _C._test_time_boxed_calls times boxed
// calls from C++ for the Python benchmark; _C._test_start_threads starts detached callers.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "opd/dispatcher.h"

namespace py = pybind11;

namespace opd::python {

void bind_testing(py::module_& m) {
  m.def(
      "_test_call_from_threads",
      [](const std::string& name, py::list args, int threads, int calls) {
        OperatorName op_name = parse_operator_name(name);
        std::vector<IValue> inputs;
        for (py::handle a : args) inputs.push_back(to_ivalue(a));
        std::vector<std::vector<std::string>> outcomes(static_cast<size_t>(threads));
        {
          py::gil_scoped_release r;
          OperatorHandle op =
              Dispatcher::singleton().find_schema_or_throw(op_name.name, op_name.overload_name);
          std::atomic<int> ready{0};
          std::vector<std::thread> workers;
          for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&, t] {
              ready.fetch_add(1);
              while (ready.load() < threads) std::this_thread::yield();
              for (int c = 0; c < calls; ++c) {
                Stack stack(inputs.begin(), inputs.end());
                try {
                  op.call_boxed(&stack);
                  outcomes[static_cast<size_t>(t)].push_back(stack.empty() ? "" : stack[0].repr());
                } catch (const Error& e) {
                  outcomes[static_cast<size_t>(t)].push_back("error: " + e.msg());
                }
              }
            });
          }
          for (std::thread& w : workers) w.join();
        }
        return outcomes;
      },
      py::arg("name"), py::arg("args"), py::arg("threads"), py::arg("calls"));

  // The same threads, detached, for the interpreter-exit tests: returns at once. (A Python
  // thread that joined them could not outlive finalization: it would end in pthread_exit inside
  // pybind11's noexcept gil_scoped_release destructor, which terminates the process; a host's
  // C++ threads are no Python threads.)
  m.def("_test_start_threads", [](const std::string& name, py::list args, int threads, int calls) {
    OperatorName op_name = parse_operator_name(name);
    std::vector<IValue> inputs;
    for (py::handle a : args) inputs.push_back(to_ivalue(a));
    for (int t = 0; t < threads; ++t) {
      std::thread([op_name, inputs, calls] {
        for (int c = 0; c < calls; ++c) {
          Stack stack(inputs.begin(), inputs.end());
          try {
            detail::CallScope scope;
            OperatorHandle op =
                Dispatcher::singleton().find_schema_or_throw(op_name.name, op_name.overload_name);
            op.call_boxed(&stack);
          } catch (const Error&) {
            // After shutdown began: the Python kernel refuses to run.
          }
        }
      }).detach();
    }
  });

  // Seconds for `calls` boxed calls from this thread without the GIL (the benchmark of a C++
  // caller reaching a Python kernel, which takes the GIL per call).
  m.def("_test_time_boxed_calls", [](const std::string& name, py::list args, int calls) {
    OperatorName op_name = parse_operator_name(name);
    std::vector<IValue> inputs;
    for (py::handle a : args) inputs.push_back(to_ivalue(a));
    py::gil_scoped_release r;
    detail::CallScope scope;
    OperatorHandle op =
        Dispatcher::singleton().find_schema_or_throw(op_name.name, op_name.overload_name);
    auto start = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) {
      Stack stack(inputs.begin(), inputs.end());
      op.call_boxed(&stack);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
}

}  // namespace opd::python
