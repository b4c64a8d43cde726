// Custom autograd functions (#15 §5): Function<T>::apply of a trivial function recording its
// node, against the generated Autograd kernel of a built-in operator doing the same arithmetic
// (x * 2 on a small tensor that requires grad), in the same run.

#include <benchmark/benchmark.h>

#include "load_plugins.h"
#include "opd/autograd.h"
#include "opd/ops.h"
#include "ratios.h"

namespace {

struct TimesTwo : opd::autograd::Function<TimesTwo> {
  static opd::Tensor forward(opd::autograd::AutogradContext*, const opd::Tensor& x) {
    return x * 2.0;
  }
  static opd::autograd::tensor_list backward(opd::autograd::AutogradContext*,
                                             opd::autograd::tensor_list grads) {
    return {grads[0] * 2.0};
  }
};

opd::Tensor small_leaf() {
  opd::bench::load_default_plugins();
  return opd::ones({4}).requires_grad_();
}

void BM_BuiltinAutogradKernel(benchmark::State& state) {
  opd::Tensor x = small_leaf();
  for (auto _ : state) {
    opd::Tensor y = x * 2.0;
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_BuiltinAutogradKernel);

void BM_FunctionApply(benchmark::State& state) {
  opd::Tensor x = small_leaf();
  for (auto _ : state) {
    opd::Tensor y = TimesTwo::apply(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_FunctionApply);

const bool kRatios = [] {
  opd::bench::add_ratio("BM_FunctionApply", "BM_BuiltinAutogradKernel", "<= 1.5");
  return true;
}();

}  // namespace
