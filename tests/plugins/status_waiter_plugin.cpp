// A plugin whose registration waits on a thread that asks the plugin manager for status() and
// list(): they must answer while the load is in progress (not wait for it, which would deadlock),
// and show this plugin `loading`. status_waiter::observed returns what the thread saw: 1 when both
// showed `loading`; the registration fails, saying what it saw, otherwise.

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "opd/plugin.h"
#include "opd/plugin_manager.h"
#include "opd/tensor.h"

namespace {

int64_t observed_value = 0;

int64_t observed(const opd::Tensor&) { return observed_value; }

std::string observe() {
  std::string seen = "status: ";
  seen += opd::to_string(opd::plugins().status("status_waiter").state);
  seen += ", list: ";
  for (const opd::PluginStatus& s : opd::plugins().list()) {
    if (s.name == "status_waiter") seen += opd::to_string(s.state);
  }
  return seen;
}

}  // namespace

OPD_PLUGIN(status_waiter, "1.0.0") {
  std::packaged_task<std::string()> task(&observe);
  std::future<std::string> seen = task.get_future();
  std::thread asker(std::move(task));
  if (seen.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    // Blocked behind this load: the test fails here; the thread cannot be stopped, so the library
    // must never be unmapped under it (the manager's thread check keeps it resident).
    asker.detach();
    throw opd::PluginError(
        "status_waiter: status() and list() blocked behind the load in progress");
  }
  asker.join();
  std::string text = seen.get();
  if (text != "status: loading, list: loading") {
    throw opd::PluginError("status_waiter: expected 'status: loading, list: loading', saw '" +
                           text + "'");
  }
  observed_value = 1;
}

OPD_LIBRARY(status_waiter, m) { m.def("observed(Tensor x) -> int"); }

OPD_LIBRARY_IMPL(status_waiter, CPU, m) { m.impl("observed", &observed); }
