#pragma once

// `opd eval --trace`: a dispatch observer that prints every hop as it happens.

#include <ostream>
#include <string>

#include "opd/dispatch_observer.h"

namespace opd::bind {

// The line of one hop, without its indentation or newline:
//   aten::add.Tensor [call_boxed] DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU) -> CPU:
//   kernel registered at plugins/cpu/binary_kernels.cpp:40 (plugin cpu 0.1.0)
// `origin` is kernel_origin(hop). Shared with the Python package's opdispatch.trace().
std::string format_hop(const DispatchHop& hop, const KernelOrigin& origin);
// "aten::add.Tensor raised", for a hop whose kernel threw.
std::string format_raised(const DispatchHop& hop);

// One line per hop, indented two spaces per nesting level:
//   aten::add.Tensor [call_boxed] DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU) -> CPU:
//   kernel registered at plugins/cpu/binary_kernels.cpp:40 (plugin cpu 0.1.0)
// (on one line), and "<op> raised" when a kernel throws. Not thread-safe: for the single
// thread of opd eval.
class TracePrinter : public DispatchObserver {
 public:
  explicit TracePrinter(std::ostream& out) : out_(out) {}
  void on_enter(const DispatchHop& hop) override;
  void on_exit(const DispatchHop& hop, bool threw) override;

 private:
  std::ostream& out_;
};

}  // namespace opd::bind
