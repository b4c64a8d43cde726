#include "opd/bind/trace_lines.h"

#include <fmt/format.h>

#include "opd/dispatcher.h"

namespace opd::bind {

std::string format_hop(const DispatchHop& hop, const KernelOrigin& origin) {
  // No kernel for the key: the call is about to raise the missing-kernel error.
  std::string what =
      origin.source == "missing" ? std::string("no kernel") : origin.source + " " + origin.debug;
  return fmt::format("{} [{}] {} -> {}: {}", hop.op.operator_name().to_string(),
                     to_string(hop.entry), hop.keys.to_string(), to_string(hop.key), what);
}

std::string format_raised(const DispatchHop& hop) {
  return hop.op.operator_name().to_string() + " raised";
}

void TracePrinter::on_enter(const DispatchHop& hop) {
  out_ << fmt::format("{:{}}{}\n", "", 2 * hop.depth, format_hop(hop, kernel_origin(hop)))
       << std::flush;
}

void TracePrinter::on_exit(const DispatchHop& hop, bool threw) {
  if (!threw) return;
  out_ << fmt::format("{:{}}{}\n", "", 2 * hop.depth, format_raised(hop)) << std::flush;
}

}  // namespace opd::bind
