// A vendor plugin whose operator gets its gradient from a custom autograd Function
// (opd/autograd_function.h): fnplug::scale(x, s) = x * s, its Autograd kernel the Function.
// The graph's node runs this plugin's backward, so it must keep the plugin mapped.

#include "opd/autograd.h"
#include "opd/ops.h"
#include "opd/plugin.h"

namespace {

opd::Tensor scale_cpu(const opd::Tensor& x, double s) { return x * s; }

struct Scale : opd::autograd::Function<Scale> {
  static opd::Tensor forward(opd::autograd::AutogradContext* ctx, const opd::Tensor& x, double s) {
    ctx->saved_data["s"] = s;
    return opd::find_operator_or_throw("fnplug::scale", "").call_as<opd::Tensor>(x, s);
  }
  static opd::autograd::tensor_list backward(opd::autograd::AutogradContext* ctx,
                                             opd::autograd::tensor_list grads) {
    return {grads[0] * ctx->saved_data["s"].to_double(), opd::Tensor()};
  }
};

}  // namespace

OPD_PLUGIN(fnplug, "1.0.0") {}

OPD_LIBRARY(fnplug, m) { m.def("scale(Tensor x, float s) -> Tensor"); }

OPD_LIBRARY_IMPL(fnplug, CPU, m) { m.impl("scale", &scale_cpu); }

OPD_LIBRARY_IMPL(fnplug, Autograd, m) { m.impl("scale", opd::autograd::function_kernel<Scale>()); }
