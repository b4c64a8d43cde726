// Compiled with only opdispatch::plugin_api, as a plugin is: every header a plugin may use is
// reachable, and together they compile without the core's headers.
#include "opd/abi.h"
#include "opd/autograd.h"
#include "opd/autograd_function.h"
#include "opd/generator.h"
#include "opd/half.h"
#include "opd/operator_handle.h"
#include "opd/ops.h"
#include "opd/plugin.h"
#include "opd/plugin_thread_state.h"
#include "opd/tensor_operators.h"
#include "opd/thread_annotations.h"
#include "opd/version.h"
#include "opd/warning.h"

// Something to compile: a kernel calling the typed API and an operator by name.
opd::Tensor probe(const opd::Tensor& x) {
  opd::NoGradGuard no_grad;
  return opd::find_operator_or_throw("aten::add", "Tensor").call_as<opd::Tensor>(x, x * 2, 1.0);
}
