// libopd_autograd.so: records the backward graph for every operator (Autograd kernels generated
// from manifests/derivatives.yaml), runs it (engine.cpp), and serves the autograd operators.
// Unloaded, the same programs run without gradients.

#include "autograd/api_kernels.h"
#include "autograd/custom_function.h"
#include "autograd/fallback.h"
#include "autograd/generated_support.h"
#include "autograd/thread_state.h"
#include "opd/plugin.h"

// Running out of per-thread state slots fails the load here (Note [Thread state of plugins]).
OPD_PLUGIN(autograd, "0.1.0") { opd::autograd::claim_thread_state(); }

OPD_LIBRARY_IMPL(aten, Autograd, m) { opd::autograd::generated::register_autograd_kernels(m); }

// Every other operator without an Autograd kernel: Note [Autograd fallback] (fallback.cpp).
OPD_LIBRARY_IMPL(_, Autograd, m) { opd::autograd::register_fallback(m); }

// CompositeImplicitAutograd: they also run under NoGradGuard (autograd keys excluded) and on
// every backend.
OPD_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  namespace api = opd::autograd::api;
  m.impl("_backward", &api::backward);
  m.impl("_opd_autograd_grad", &api::grad);
  m.impl("requires_grad_", &api::requires_grad_);
  m.impl("retain_grad", &api::retain_grad);
  m.impl("retains_grad", &api::retains_grad);
  m.impl("is_leaf", &api::is_leaf_);
  m.impl("output_nr", &api::output_nr);
  m.impl("_version", &api::version);
  m.impl("detach", &api::detach);
  m.impl("_opd_grad", &api::grad_of);
  m.impl("_opd_set_grad", &api::set_grad);
  m.impl("_opd_requires_grad", &api::requires_grad_of);
}

OPD_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  namespace api = opd::autograd::api;
  m.impl("select_backward", &api::select_backward);
  m.impl("slice_backward", &api::slice_backward);
}

// Not an aten operator: PyTorch reads grad_fn from Python. opd::autograd::grad_fn_name calls it.
OPD_LIBRARY(autograd, m) {
  m.def("grad_fn_name(Tensor self) -> str", &opd::autograd::api::grad_fn_name);
  m.def("_set_fallback_mode(str mode) -> ()", &opd::autograd::set_fallback_mode_kernel);
  m.def("_fallback_mode() -> str", &opd::autograd::fallback_mode_kernel);
  opd::autograd::register_custom_function(m);
}
