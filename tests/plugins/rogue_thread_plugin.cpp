// A plugin that breaks the shutdown contract: its registration starts a detached thread that
// runs the plugin's code forever, and its shutdown does not stop it. Unmapping the library would
// crash the host; the manager must keep it resident, saying how many threads were left running.
// rogue_thread::ticks returns how often the thread has woken up.

#include <atomic>
#include <chrono>
#include <thread>

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

std::atomic<int64_t> ticks{0};

int64_t ticks_of(const opd::Tensor&) { return ticks.load(); }

}  // namespace

OPD_PLUGIN(rogue_thread, "1.0.0") {
  std::thread([] {
    for (;;) {
      ticks.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }).detach();
}

OPD_LIBRARY(rogue_thread, m) { m.def("ticks(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(rogue_thread, CPU, m) { m.impl("ticks", &ticks_of); }
