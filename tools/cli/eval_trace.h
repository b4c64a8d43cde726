#pragma once

// `opd eval --trace`: a dispatch observer that prints every hop as it happens.

#include <ostream>

#include "opd/dispatch_observer.h"

namespace opd::cli::eval {

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

}  // namespace opd::cli::eval
