// libopd_functionalize.so: the Functionalize layer (issue 34 §3), loaded on demand by the first
// opdispatch.func.functionalize call. Its boxed fallback (fallback.cpp) and view kernels
// (view_kernels.cpp) run every operator on functional tensors (Note [Functional tensors]); the
// operators of namespace `functionalize` are what opdispatch.func uses to wrap, sync and unwrap
// (torch's _to_functional_tensor, _sync, _from_functional_tensor, _is_functional_tensor).

#include "functionalize/fallback.h"
#include "functionalize/functional_tensor.h"
#include "functionalize/view_kernels.h"
#include "opd/plugin.h"

namespace opd::functionalize {
namespace {

Tensor to_functional_tensor(const Tensor& t) {
  OPD_CHECK(!is_functional(t), "_to_functional_tensor: the tensor is already functional");
  return to_functional(t);
}

Tensor from_functional_tensor(const Tensor& t) {
  OPD_CHECK(is_functional(t), "_from_functional_tensor: expected a functional tensor");
  return value_of(t);
}

void sync_tensor(const Tensor& t) { sync(t); }

bool is_functional_tensor(const Tensor& t) { return is_functional(t); }

// Whether functional `t`, made from `original`, now has another value: a mutation reached it.
bool is_mutated(const Tensor& t, const Tensor& original) {
  OPD_CHECK(is_functional(t), "_is_mutated: expected a functional tensor");
  return !value_of(t).is_same(original);
}

bool set_reapply_views_tls(bool reapply) { return set_reapply_views(reapply); }

void define_operators(Library& m) {
  m.def("_to_functional_tensor(Tensor t) -> Tensor", &to_functional_tensor);
  m.def("_from_functional_tensor(Tensor t) -> Tensor", &from_functional_tensor);
  m.def("_sync(Tensor t) -> ()", &sync_tensor);
  m.def("_is_functional_tensor(Tensor t) -> bool", &is_functional_tensor);
  m.def("_is_mutated(Tensor t, Tensor original) -> bool", &is_mutated);
  m.def("_set_reapply_views(bool reapply) -> bool", &set_reapply_views_tls);
}

// The same kernels on Functionalize: a functional tensor argument would otherwise send the call
// to the fallback, which would unwrap it.
void impl_operators(Library& m) {
  m.impl("_to_functional_tensor", &to_functional_tensor);
  m.impl("_from_functional_tensor", &from_functional_tensor);
  m.impl("_sync", &sync_tensor);
  m.impl("_is_functional_tensor", &is_functional_tensor);
  m.impl("_is_mutated", &is_mutated);
  m.impl("_set_reapply_views", &set_reapply_views_tls);
}

}  // namespace
}  // namespace opd::functionalize

OPD_PLUGIN(functionalize, "0.1.0") { opd::functionalize::claim_thread_state(); }

OPD_LIBRARY(functionalize, m) { opd::functionalize::define_operators(m); }
OPD_LIBRARY_IMPL(functionalize, Functionalize, m) { opd::functionalize::impl_operators(m); }
OPD_LIBRARY_IMPL(aten, Functionalize, m) { opd::functionalize::register_view_kernels(m); }
OPD_LIBRARY_IMPL(_, Functionalize, m) { opd::functionalize::register_fallback(m); }
