#pragma once

// The user API of autograd (custom functions, opd::autograd::Function, in
// opd/autograd_function.h). Recording and the backward pass are the autograd plugin's
// (plugins/autograd): these functions reach it through the dispatcher, so they fail with the
// dispatcher's missing-kernel error when it is not loaded. Tensor::backward(), grad(),
// requires_grad(), requires_grad_(), is_leaf(), retain_grad(), detach() are methods of Tensor.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opd/autograd_function.h"
#include "opd/export.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/ops.h"

namespace opd {

// Turns gradient recording off for its scope, on this thread (PyTorch's torch::NoGradGuard):
// the autograd keys are excluded, so operators run without recording.
class NoGradGuard {
 public:
  NoGradGuard() : guard_(kAutogradKeySet) {}

 private:
  ExcludeDispatchKeyGuard guard_;
};

// Sets gradient recording on or off for its scope, on this thread, restoring the previous state
// afterwards (PyTorch's AutoGradMode): AutoGradMode enable(true) records even inside a
// NoGradGuard.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled)
      : previous_(tls_local_dispatch_key_set().excluded & kAutogradKeySet) {
    for (DispatchKey k : kAutogradKeySet) tls_set_dispatch_key_excluded(k, !enabled);
  }
  ~AutoGradMode() {
    for (DispatchKey k : kAutogradKeySet) tls_set_dispatch_key_excluded(k, previous_.has(k));
  }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  DispatchKeySet previous_;
};

// Whether operators record gradients on this thread (no NoGradGuard in force).
inline bool is_grad_enabled() {
  return !tls_local_dispatch_key_set().excluded.has_any(kAutogradKeySet);
}

namespace autograd {

// The gradients of `outputs` with respect to `inputs` (torch.autograd.grad), without touching
// any .grad(). `grad_outputs`: one per output, or empty for scalar outputs (ones). An input the
// outputs do not depend on is an error unless allow_unused (then its gradient is undefined).
// retain_graph defaults to create_graph.
OPD_API std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                                 const std::vector<Tensor>& inputs,
                                 const std::vector<Tensor>& grad_outputs = {},
                                 std::optional<bool> retain_graph = std::nullopt,
                                 bool create_graph = false, bool allow_unused = false);

// The name of the node that made `t` ("AddBackward0"), or "" for a leaf or a tensor without
// history.
OPD_API std::string grad_fn_name(const Tensor& t);

// Replaces the accumulated gradient of `t` (undefined clears it, as `x.grad = None`).
OPD_API void set_grad(const Tensor& t, const Tensor& grad);

// What happens to an operator without an Autograd kernel called on inputs that require grad
// (PyTorch's torch._C._set_autograd_fallback_mode), for the whole process: "warn" (the
// default) gives its outputs a node that warns once per operator when backward reaches it,
// "error" one that raises there, "nothing" no node (the outputs do not require grad). Either
// way an argument the schema marks as written gets its version bumped. Throws Error for another
// mode, and when the autograd plugin, which the fallback belongs to, is not loaded; its mode
// starts at "warn" each time it is loaded.
OPD_API void set_fallback_mode(std::string_view mode);
OPD_API std::string fallback_mode();

}  // namespace autograd
}  // namespace opd
