#include "eval_trace.h"

#include <fmt/format.h>

#include "opd/dispatcher.h"

namespace opd::cli::eval {

void TracePrinter::on_enter(const DispatchHop& hop) {
  KernelOrigin origin = kernel_origin(hop);
  // No kernel for the key: the call is about to raise the missing-kernel error.
  std::string what =
      origin.source == "missing" ? std::string("no kernel") : origin.source + " " + origin.debug;
  out_ << fmt::format("{:{}}{} [{}] {} -> {}: {}\n", "", 2 * hop.depth,
                      hop.op.operator_name().to_string(), to_string(hop.entry),
                      hop.keys.to_string(), to_string(hop.key), what)
       << std::flush;
}

void TracePrinter::on_exit(const DispatchHop& hop, bool threw) {
  if (!threw) return;
  out_ << fmt::format("{:{}}{} raised\n", "", 2 * hop.depth, hop.op.operator_name().to_string())
       << std::flush;
}

}  // namespace opd::cli::eval
