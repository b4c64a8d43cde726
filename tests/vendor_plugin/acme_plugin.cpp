// A vendor plugin. Its operators, their kernels' declarations and their registration come from
// acme_functions.yaml through opd-gen (opd_add_plugin's NATIVE_FUNCTIONS); this file defines the
// kernels. acme::scale's gradient comes from acme_derivatives.yaml; acme::softsign's is the
// Function below.

#include <cmath>

#include "acme/native/CPU.h"
#include "acme/native/Meta.h"
#include "acme/ops.h"
#include "opd/autograd.h"
#include "opd/ops.h"
#include "opd/plugin.h"

namespace acme::native {
namespace {

// out[i] = f(x[i]) over a contiguous float32 or float64 tensor, on the CPU.
template <class F>
opd::Tensor map_cpu(const char* op, const opd::Tensor& input, F f) {
  opd::Tensor x = input.contiguous();
  opd::Tensor out = opd::empty_like(x);
  auto run = [&](auto* out_data, const auto* x_data) {
    for (int64_t i = 0; i < x.numel(); ++i) out_data[i] = f(x_data[i]);
  };
  switch (x.scalar_type()) {
    case opd::ScalarType::Float32:
      run(out.data_ptr<float>(), x.data_ptr<float>());
      break;
    case opd::ScalarType::Float64:
      run(out.data_ptr<double>(), x.data_ptr<double>());
      break;
    default:
      OPD_CHECK(false, "acme::{}: expected a float32 or float64 tensor, got {}", op,
                opd::to_string(x.scalar_type()));
  }
  return out;
}

}  // namespace

opd::Tensor axpy_cpu(double a, const opd::Tensor& x, const opd::Tensor& y) {
  OPD_CHECK(x.sizes() == y.sizes(), "acme::axpy: x has shape [{}] but y has shape [{}]",
            fmt::join(x.sizes(), ", "), fmt::join(y.sizes(), ", "));
  return opd::add(opd::mul(x, a), y);
}

opd::Tensor scale_cpu(const opd::Tensor& x, double alpha) {
  return map_cpu("scale", x, [alpha](auto v) { return static_cast<decltype(v)>(alpha * v); });
}

// Shapes only: a Meta tensor of the input's shape and dtype.
opd::Tensor scale_meta(const opd::Tensor& x, double) { return opd::empty_like(x); }

opd::Tensor softsign_cpu(const opd::Tensor& x) {
  return map_cpu("softsign", x, [](auto v) { return v / (1 + std::abs(v)); });
}

}  // namespace acme::native

namespace {

// softsign's gradient written by hand: d/dx x / (1 + |x|) = 1 / (1 + |x|)^2.
struct Softsign : opd::autograd::Function<Softsign> {
  static opd::Tensor forward(opd::autograd::AutogradContext* ctx, const opd::Tensor& x) {
    ctx->save_for_backward({x});
    return acme::softsign(x);
  }
  static opd::autograd::tensor_list backward(opd::autograd::AutogradContext* ctx,
                                             opd::autograd::tensor_list grads) {
    opd::Tensor x = ctx->get_saved_variables()[0];
    opd::Tensor d = opd::abs(x) + 1;
    return {grads[0] / (d * d)};
  }
};

}  // namespace

OPD_PLUGIN(acme, "2.2.0") {}

OPD_LIBRARY_IMPL(acme, Autograd, m) {
  m.impl("softsign", opd::autograd::function_kernel<Softsign>());
}
