#pragma once

// The backward engine: runs a graph from its roots in dependency order on the calling thread.

#include <vector>

#include "autograd/node.h"
#include "opd/local_dispatch_key_set.h"

namespace opd::autograd {

// Turns recording on or off for its scope (the engine runs formulas recording only with
// create_graph), restoring each autograd key's exclusion afterwards.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  DispatchKeySet previously_excluded_;
};

// Runs the graph below `roots`, feeding root i with grad_roots[i]. Every node runs once all the
// nodes that feed it have run; when several are ready the most recently created runs first.
// Without keep_graph each node frees its saved tensors after running. With create_graph the
// formulas are recorded, so the gradients have history.
//
// With `outputs` empty, leaves' AccumulateGrad nodes add into .grad() and retained non-leaf
// gradients are filled; returns nothing. Otherwise only the nodes leading to `outputs` run, no
// .grad() changes, and the gradients arriving at each output edge are returned (undefined where
// none arrives).
variable_list run_backward(const std::vector<Edge>& roots, variable_list grad_roots,
                           bool keep_graph, bool create_graph, const std::vector<Edge>& outputs);

}  // namespace opd::autograd
