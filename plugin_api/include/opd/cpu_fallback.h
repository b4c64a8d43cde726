#pragma once

// Note [CPU fallback]
// A backend that implements a few operators can still run every operator the CPU plugin has:
// it registers opd::cpu_fallback as its key's backend fallback (or per operator), as PyTorch's
// out-of-tree backends register at::native::cpu_fallback:
//
//   OPD_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(&opd::cpu_fallback); }
//
// Its own kernels still win: a backend fallback serves only the operators that have no kernel
// for the key (Note [Kernel precedence]). For the others the fallback
//   1. copies every tensor argument that is not on the CPU to the CPU (a Tensor, a Tensor?, each
//      element of a Tensor[] or Tensor?[]), and Device arguments become "cpu"; tensors on two
//      devices of the backend (acme:0 and acme:1) are refused, with torch's "Expected all
//      tensors to be on the same device" text;
//   2. redispatches the operator to the CPU key through the dispatcher (so the CPU plugin's
//      kernel, or the composite the CPU table holds, runs);
//   3. writes back into the original arguments every one the schema marks as written
//      (Tensor(a!): in-place self, out= arguments, written list elements), resizing them first
//      when the CPU kernel resized its copy, and native_batch_norm's running statistics, which
//      1.13's schema does not mark (Note [Unannotated writes] in core/src/dispatch);
//   4. replaces each result: one that aliases a written argument (Tensor(a!) returns) by that
//      original argument object, as add_ and out= calls return theirs; any other tensor result
//      by a copy on the target device: the first non-CPU tensor argument's device, else a Device
//      argument's.
// A result declared as a view (Tensor(a), not written) cannot share storage across devices: as
// PyTorch's default (error_on_views=false) it is copied with a warning, or refused with
// error_on_views. An operator with no CPU kernel either raises NotImplementedError naming the
// operator and the device.
//
// Each operator warns once per process and backend, when its CPU kernel has returned (not for
// an operator the CPU cannot run either), with torch's MPS text:
//   "The operator 'aten::sum' is not currently supported on the acme backend and will fall back
//    to run on the CPU. This may have performance implications."
// (the backend named as devices print: the registered PrivateUse1 name, "cuda"), through
// opd::warn (TORCH_WARN_ONCE's counterpart here: the "opd" logger, or Python's UserWarning).
// cpu_fallback_quiet does the same without warning, for a backend that expects to fall back.

#include "opd/boxing.h"
#include "opd/export.h"
#include "opd/operator_handle.h"

namespace opd {

struct CpuFallbackOptions {
  // Warn once per operator and backend (the text above).
  bool warn = true;
  // Refuse results declared as views (Tensor(a)) instead of copying them with a warning.
  bool error_on_views = false;
};

// The boxed fallback, with the default options: registrable as is with Library::fallback/impl.
// REQUIRES: `op` has a schema and `stack` ends with its arguments (as a boxed kernel is called);
// they are replaced by its results. Thread-safe (the warned-once set is under a mutex). Throws
// what the CPU kernel throws; NotImplementedError when the CPU has no kernel for `op` either;
// Error for a view result under error_on_views.
OPD_API void cpu_fallback(const OperatorHandle& op, Stack* stack);
// The same without the warning.
OPD_API void cpu_fallback_quiet(const OperatorHandle& op, Stack* stack);
// The same with explicit options, for a backend's own boxed kernel that wraps it.
OPD_API void cpu_fallback_with(const OperatorHandle& op, Stack* stack,
                               const CpuFallbackOptions& options);

}  // namespace opd
