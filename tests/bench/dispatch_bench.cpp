// The dispatch fast path against a direct call through a function pointer of the same
// signature; boxed calls; key-set computation under TLS guards.

#include <benchmark/benchmark.h>

#include <utility>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/library.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/tensor.h"
#include "ratios.h"

namespace {

using opd::Tensor;

[[gnu::noinline]] Tensor identity(const Tensor& x) { return x; }

Tensor make_input() {
  static float data[4] = {1, 2, 3, 4};
  return opd::from_blob(data, std::vector<int64_t>{4}, opd::ScalarType::Float32);
}

// Note [Benchmarks own their dispatch state]: every case runs alone, in any order and together
// with the others in one process (`opd bench` with no filter), where another case may have
// loaded the default plugins and with them the autograd plugin's Autograd fallback, which covers
// every operator. So no case here registers a backend fallback (a second one for a key is
// refused) or depends on whether one is registered: each operator states its own Autograd
// entry, which wins over any fallback. `identity` and `identity_rt` have the fallthrough (the
// core's default, as before the autograd plugin); `identity_covered` has a stand-in with the
// autograd plugin's entry (KernelFunction::make_autograd_fallback), as the plugin's fallback
// puts into every operator's table.
void passing_autograd_fallback(opd::OperatorKernel*, const opd::OperatorHandle& op,
                               opd::DispatchKeySet ks, opd::Stack* stack) {
  op.redispatch_boxed(ks - opd::kAutogradKeySet, stack);
}

// `identity` registered as generated registrations register kernels (OPD_FN: the function is
// known at compile time), and `identity_rt` through a function pointer known only at run time
// (a wrapper calls the stored pointer: one more indirect call).
struct Registered {
  opd::Library def{opd::Library::DEF, "opd_bench"};
  opd::Library cpu{opd::Library::IMPL, "opd_bench", opd::DispatchKey::CPU};
  opd::Library autograd{opd::Library::IMPL, "opd_bench", opd::DispatchKey::Autograd};
  Registered() {
    def.def("identity(Tensor self) -> Tensor");
    def.def("identity_rt(Tensor self) -> Tensor");
    def.def("identity_covered(Tensor self) -> Tensor");
    cpu.impl("identity", OPD_FN(identity));
    Tensor (*volatile runtime_pointer)(const Tensor&) = &identity;
    cpu.impl("identity_rt", runtime_pointer);
    cpu.impl("identity_covered", OPD_FN(identity));
    autograd.impl("identity", opd::CppFunction::make_fallthrough());
    autograd.impl("identity_rt", opd::CppFunction::make_fallthrough());
    autograd.impl("identity_covered",
                  opd::CppFunction::from_kernel(
                      opd::KernelFunction::make_autograd_fallback(&passing_autograd_fallback)));
  }
};

opd::TypedOperatorHandle<Tensor(const Tensor&)> identity_op(const char* name = "identity") {
  static Registered registered;
  return opd::Dispatcher::singleton()
      .find_schema_or_throw(std::string("opd_bench::") + name, "")
      .typed<Tensor(const Tensor&)>();
}

void BM_DirectCall(benchmark::State& state) {
  Tensor x = make_input();
  Tensor (*volatile fn)(const Tensor&) = &identity;
  for (auto _ : state) {
    Tensor y = fn(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_DirectCall);

void run_unboxed(benchmark::State& state, const char* name = "identity") {
  auto op = identity_op(name);
  Tensor x = make_input();
  for (auto _ : state) {
    Tensor y = op.call(x);
    benchmark::DoNotOptimize(y);
  }
}

void BM_DispatchUnboxed(benchmark::State& state) { run_unboxed(state); }
BENCHMARK(BM_DispatchUnboxed);

void BM_DispatchUnboxedRuntimeFunctionPointer(benchmark::State& state) {
  auto op = identity_op("identity_rt");
  Tensor x = make_input();
  for (auto _ : state) {
    Tensor y = op.call(x);
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_DispatchUnboxedRuntimeFunctionPointer);

void run_boxed(benchmark::State& state, const char* name = "identity") {
  auto op = identity_op(name);
  Tensor x = make_input();
  opd::Stack stack;
  stack.reserve(1);
  for (auto _ : state) {
    stack.emplace_back(x);
    op.call_boxed(&stack);
    benchmark::DoNotOptimize(stack.back());
    stack.clear();
  }
}

void BM_DispatchBoxed(benchmark::State& state) { run_boxed(state); }
BENCHMARK(BM_DispatchBoxed);

// BM_DispatchBoxed's loop without a dispatcher, written plainly: the kernel called on the
// stack's argument, its result put in the argument's place. Its four reference-count updates
// (the push, the kernel's copy, the argument dropped, the clear) are made by every boxed call
// of `identity` however it is dispatched, c10's included (BM_TorchBoxedWithoutDispatcher): at
// about 5 ns each, they are most of either loop.
void BM_BoxedWithoutDispatcher(benchmark::State& state) {
  Tensor x = make_input();
  opd::Stack stack;
  stack.reserve(1);
  for (auto _ : state) {
    stack.emplace_back(x);
    Tensor y = identity(stack.back().to_tensor());
    stack.back() = std::move(y);
    benchmark::DoNotOptimize(stack.back());
    stack.clear();
  }
}
BENCHMARK(BM_BoxedWithoutDispatcher);

void BM_KeySetUnderTlsGuards(benchmark::State& state) {
  auto op = identity_op();
  Tensor x = make_input();
  opd::IncludeDispatchKeyGuard include(opd::DispatchKey::Tracer);
  opd::AutoDispatchBelowAutograd below;
  for (auto _ : state) {
    auto ks = opd::detail::compute_dispatch_key_set(opd::detail::arguments_key_set(x),
                                                    op.entry().key_mask());
    benchmark::DoNotOptimize(ks);
  }
}
BENCHMARK(BM_KeySetUnderTlsGuards);

// A vendor operator called without grad once the autograd plugin's fallback covers the core's
// Autograd fallthrough (#15 §3): against BM_DispatchUnboxed / BM_DispatchBoxed, the same call
// under the fallthrough, as before the fallback. `identity_covered`'s Autograd entry is a
// stand-in with the plugin's (Note [Benchmarks own their dispatch state]): the fast path skips
// it without calling it.
void BM_DispatchUnboxedUnderAutogradFallback(benchmark::State& state) {
  run_unboxed(state, "identity_covered");
}
BENCHMARK(BM_DispatchUnboxedUnderAutogradFallback);

void BM_DispatchBoxedUnderAutogradFallback(benchmark::State& state) {
  run_boxed(state, "identity_covered");
}
BENCHMARK(BM_DispatchBoxedUnderAutogradFallback);

const bool ratios_declared = [] {
  opd::bench::add_ratio("BM_DispatchUnboxedUnderAutogradFallback", "BM_DispatchUnboxed",
                        "<= 1.1 (autograd fallback, no grad)");
  opd::bench::add_ratio("BM_DispatchBoxedUnderAutogradFallback", "BM_DispatchBoxed",
                        "<= 1.1 (autograd fallback, no grad)");
  opd::bench::add_ratio("BM_DispatchUnboxed", "BM_DirectCall", "<= 1.2");
  opd::bench::add_ratio("BM_DispatchUnboxedRuntimeFunctionPointer", "BM_DirectCall", "report");
  opd::bench::add_ratio("BM_DispatchBoxed", "BM_DirectCall", "report");
  opd::bench::add_ratio("BM_DispatchBoxed", "BM_BoxedWithoutDispatcher", "report");
  return true;
}();

}  // namespace
