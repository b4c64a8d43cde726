#include "opd/warning.h"

#include <atomic>

#include "logging.h"

namespace opd {
namespace {

std::atomic<WarningHandler> g_handler{nullptr};

}  // namespace

void warn(std::string_view message) {
  if (WarningHandler h = g_handler.load(std::memory_order_acquire)) {
    h(message);
    return;
  }
  logger()->warn("{}", message);
}

WarningHandler set_warning_handler(WarningHandler handler) {
  return g_handler.exchange(handler, std::memory_order_acq_rel);
}

}  // namespace opd
