// KernelFunction: every way of writing a kernel (function pointer, lambda, stateful functor,
// kernel taking DispatchKeySet, boxed function) is callable through both calling conventions
// (PyTorch's kernel_function_test.cpp). That every argument and return type survives both is
// tested in tests/plugin_api/boxing_test.cpp; the boxed argument checks in
// tests/core/dispatch/boxed_call_test.cpp.

#include "opd/kernel_function.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using ::testing::HasSubstr;

OperatorHandle op(std::string_view name, std::string_view overload = "") {
  return Dispatcher::singleton().find_schema_or_throw(name, overload);
}

// ---- The kinds of kernel, each through both conventions --------------------------------------

int64_t g_factor = 0;   // what the last scale kernel saw
DispatchKeySet g_keys;  // what the last keyed kernel saw
std::string g_op_name;  // what the last boxed kernel was told it serves

Tensor scale_function(const Tensor& self, int64_t factor) {
  g_factor = factor;
  return self;
}

Tensor scale_keyed(DispatchKeySet ks, const Tensor& self, int64_t factor) {
  g_keys = ks;
  g_factor = factor;
  return self;
}

// Pops (self, factor), pushes self.
void scale_boxed(const OperatorHandle& h, Stack* s) {
  ASSERT_GE(s->size(), 2u);
  g_op_name = h.operator_name().to_string();
  g_factor = s->back().to_int();
  Tensor self = (*s)[s->size() - 2].to_tensor();
  s->pop_back();
  s->pop_back();
  s->push_back(self);
}

void scale_boxed_keyed(const OperatorHandle& h, DispatchKeySet ks, Stack* s) {
  g_keys = ks;
  scale_boxed(h, s);
}

struct CountingScale {
  int64_t total = 0;  // sum of the factors seen by this functor
  Tensor operator()(const Tensor& self, int64_t factor) {
    total += factor;
    g_factor = total;
    return self;
  }
};

constexpr const char* kScaleSchema = "scale(Tensor self, int factor) -> Tensor";

// Calls ns::scale(x, 3) unboxed and then ns::scale(x, 5) boxed; both must reach the kernel and
// give x back. Returns the factors the kernel reported after each call.
std::pair<int64_t, int64_t> call_scale_both_ways(const std::string& ns) {
  float buf[4] = {};
  Tensor x = from_blob(buf, {4}, kFloat);
  OperatorHandle h = op(ns + "::scale");

  g_factor = 0;
  Tensor r = h.typed<Tensor(const Tensor&, int64_t)>().call(x, 3);
  EXPECT_TRUE(r.is_same(x));
  int64_t after_unboxed = g_factor;

  Stack s{x, int64_t{5}};
  h.call_boxed(&s);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_TRUE(!s.empty() && s[0].to_tensor().is_same(x));
  return {after_unboxed, g_factor};
}

TEST(KernelFunction, FunctionPointerIsCallableUnboxedAndBoxed) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_fnptr");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, &scale_function);
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_fnptr"), std::make_pair(int64_t{3}, int64_t{5}));
}

TEST(KernelFunction, CapturelessLambdaIsCallableUnboxedAndBoxed) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_lambda");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, [](const Tensor& self, int64_t factor) {
    g_factor = factor;
    return self;
  });
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_lambda"), std::make_pair(int64_t{3}, int64_t{5}));
}

TEST(KernelFunction, CapturingLambdaSeesItsCaptures) {
  int64_t offset = 100;
  Library lib(Library::FRAGMENT, "test_kernel_fn_capture");
  lib.def(kScaleSchema)
      .impl("scale", DispatchKey::CPU, [offset](const Tensor& self, int64_t factor) {
        g_factor = offset + factor;
        return self;
      });
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_capture"),
            std::make_pair(int64_t{103}, int64_t{105}));
}

TEST(KernelFunction, StatefulFunctorKeepsStateAcrossCallsInBothConventions) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_functor");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, CountingScale{});
  // One functor serves both conventions: the boxed call sees the unboxed call's state.
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_functor"), std::make_pair(int64_t{3}, int64_t{8}));
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_functor"),
            std::make_pair(int64_t{11}, int64_t{16}));
}

TEST(KernelFunction, MutableLambdaKeepsState) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_mutable");
  lib.def(kScaleSchema)
      .impl("scale", DispatchKey::CPU, [calls = int64_t{0}](const Tensor& self, int64_t) mutable {
        g_factor = ++calls;
        return self;
      });
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_mutable"), std::make_pair(int64_t{1}, int64_t{2}));
}

TEST(KernelFunction, FunctorIsDestroyedOnceDeregisteredAndReclaimed) {
  auto token = std::make_shared<int>(0);
  {
    Library lib(Library::FRAGMENT, "test_kernel_fn_lifetime");
    lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, [token](const Tensor& self, int64_t) {
      return self;
    });
    call_scale_both_ways("test_kernel_fn_lifetime");
    EXPECT_EQ(token.use_count(), 2) << "the dispatcher holds exactly one copy of the functor";
  }
  Dispatcher::singleton().reclaim();
  EXPECT_EQ(token.use_count(), 1) << "the functor is freed once no call can still run it";
  EXPECT_EQ(Dispatcher::singleton().retired_count(), 0u);
}

TEST(KernelFunction, KernelTakingDispatchKeySetGetsTheCallsKeys) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_keyed");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, &scale_keyed);
  g_keys = DispatchKeySet();
  auto [unboxed, boxed] = call_scale_both_ways("test_kernel_fn_keyed");
  EXPECT_EQ(unboxed, 3);
  EXPECT_EQ(boxed, 5);
  // The fallthrough keys (ADInplaceOrView, AutogradCPU) are masked out of what the kernel sees.
  EXPECT_EQ(g_keys, DispatchKeySet(DispatchKey::CPU)) << g_keys.to_string();
}

TEST(KernelFunction, KernelTakingDispatchKeySetHasTheSignatureWithoutIt) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_keyed_sig");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, &scale_keyed);
  EXPECT_NO_THROW((op("test_kernel_fn_keyed_sig::scale").typed<Tensor(const Tensor&, int64_t)>()));
  EXPECT_THAT(op("test_kernel_fn_keyed_sig::scale").dump_state(),
              HasSubstr(":: (Tensor _0, int _1) -> Tensor _0 [ boxed unboxed ]"));
}

TEST(KernelFunction, BoxedFunctionIsCallableUnboxedAndBoxed) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_boxed");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, &scale_boxed);
  g_op_name.clear();
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_boxed"), std::make_pair(int64_t{3}, int64_t{5}));
  EXPECT_EQ(g_op_name, "test_kernel_fn_boxed::scale");
}

TEST(KernelFunction, BoxedFunctionWithDispatchKeySetIsCallableUnboxedAndBoxed) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_boxed_keyed");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, &scale_boxed_keyed);
  g_keys = DispatchKeySet();
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_boxed_keyed"),
            std::make_pair(int64_t{3}, int64_t{5}));
  EXPECT_EQ(g_keys, DispatchKeySet(DispatchKey::CPU)) << g_keys.to_string();
}

TEST(KernelFunction, BoxedLambdaIsCallableUnboxedAndBoxed) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_boxed_lambda");
  int calls = 0;
  lib.def(kScaleSchema)
      .impl("scale", DispatchKey::CPU, [&calls](const OperatorHandle& h, Stack* s) {
        ++calls;
        scale_boxed(h, s);
      });
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_boxed_lambda"),
            std::make_pair(int64_t{3}, int64_t{5}));
  EXPECT_EQ(calls, 2);
}

TEST(KernelFunction, RawBoxedKernelFunctionIsCallableBothWays) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_raw");
  lib.def(kScaleSchema)
      .impl("scale", DispatchKey::CPU,
            CppFunction::from_kernel(KernelFunction::make_from_boxed_function(
                [](OperatorKernel*, const OperatorHandle& h, DispatchKeySet, Stack* s) {
                  scale_boxed(h, s);
                })));
  EXPECT_EQ(call_scale_both_ways("test_kernel_fn_raw"), std::make_pair(int64_t{3}, int64_t{5}));
}

// ---- KernelFunction itself -------------------------------------------------------------------

TEST(KernelFunction, DumpStateOfEachKind) {
  EXPECT_EQ(KernelFunction().dump_state(), "");
  EXPECT_EQ(KernelFunction::make_fallthrough().dump_state(), "fallthrough boxed ");
  EXPECT_EQ(KernelFunction::make_from_unboxed_callable(&scale_function).dump_state(),
            "boxed unboxed ");
  EXPECT_EQ(CppFunction(&scale_boxed).kernel().dump_state(), "boxed ");
  EXPECT_EQ(CppFunction([](const Tensor& t) { return t; }).kernel().dump_state(), "boxed unboxed ");
}

TEST(KernelFunction, ValidityFallthroughAndUnboxedFlags) {
  KernelFunction empty;
  EXPECT_FALSE(empty.is_valid());
  KernelFunction ft = KernelFunction::make_fallthrough();
  EXPECT_TRUE(ft.is_valid());
  EXPECT_TRUE(ft.is_fallthrough());
  EXPECT_FALSE(ft.has_unboxed());
  KernelFunction unboxed = KernelFunction::make_from_unboxed_callable(&scale_function);
  EXPECT_TRUE(unboxed.has_unboxed());
  EXPECT_FALSE(unboxed.is_fallthrough());
}

TEST(KernelFunction, CopiesAreTheSameKernelAndDistinctKernelsAreNot) {
  KernelFunction a = KernelFunction::make_from_unboxed_callable(&scale_function);
  KernelFunction copy = a;
  KernelFunction b = KernelFunction::make_from_unboxed_callable(&scale_function);
  EXPECT_TRUE(a.same_as(copy));
  EXPECT_EQ(a.functor(), copy.functor());
  EXPECT_FALSE(a.same_as(b));  // same code, another functor
}

TEST(KernelFunction, MakeFromBoxedFunctionRejectsNull) {
  EXPECT_THROW(KernelFunction::make_from_boxed_function(nullptr), Error);
}

TEST(KernelFunction, CppFunctionRecordsSignatureAndInferredSchemaForUnboxedKernelsOnly) {
  CppFunction unboxed(&scale_function);
  ASSERT_TRUE(unboxed.signature().has_value());
  EXPECT_TRUE(*unboxed.signature() == (CppSignature::make<Tensor(const Tensor&, int64_t)>()));
  EXPECT_EQ(unboxed.inferred_schema(), "(Tensor _0, int _1) -> Tensor _0");
  CppFunction keyed(&scale_keyed);
  EXPECT_TRUE(*keyed.signature() == (CppSignature::make<Tensor(const Tensor&, int64_t)>()));
  CppFunction boxed(&scale_boxed);
  EXPECT_FALSE(boxed.signature().has_value());
  EXPECT_FALSE(boxed.inferred_schema().has_value());
}

TEST(KernelFunction, FallthroughKernelDumpState) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_ft");
  lib.def(kScaleSchema).impl("scale", DispatchKey::Tracer, CppFunction::make_fallthrough());
  EXPECT_THAT(op("test_kernel_fn_ft::scale").dump_state(),
              HasSubstr("Tracer: registered at tests/core/dispatch/kernel_function_test.cpp:"));
  EXPECT_THAT(op("test_kernel_fn_ft::scale").dump_state(),
              HasSubstr(":: (none) [ fallthrough boxed ]\n"));
}

// A call can reach a fallthrough kernel only by racing with its registration (Note
// [Fallthrough]); it then runs what the keys below the fallthrough's key serve.
TEST(KernelFunction, ExecutingAFallthroughKernelPassesTheCallBelowItsKey) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_ft_run");
  lib.def(kScaleSchema).impl("scale", DispatchKey::CPU, &scale_keyed);
  float data[1] = {1};
  Tensor x = from_blob(data, std::vector<int64_t>{1}, ScalarType::Float32);
  Stack s{IValue(x), IValue(int64_t{9})};
  g_factor = 0;
  KernelFunction::make_fallthrough().call_boxed(
      op("test_kernel_fn_ft_run::scale"),
      DispatchKeySet(DispatchKey::AutogradCPU).add(DispatchKey::CPU), &s);
  EXPECT_EQ(g_factor, 9) << "the CPU kernel served the call";
  EXPECT_EQ(g_keys, DispatchKeySet(DispatchKey::CPU));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s.back().to_tensor().is_same(x));
}

TEST(KernelFunction, DumpStateLineShowsInferredSchemaAndKernelState) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_dump");
  lib.def(kScaleSchema);
  lib.impl("scale", DispatchKey::CPU, &scale_function);
  lib.impl("scale", DispatchKey::CUDA, &scale_boxed);
  std::string dump = op("test_kernel_fn_dump::scale").dump_state();
  EXPECT_THAT(dump, HasSubstr(":: (Tensor _0, int _1) -> Tensor _0 [ boxed unboxed ]\n"));
  EXPECT_THAT(dump, HasSubstr(":: (none) [ boxed ]\n"));
}

}  // namespace
}  // namespace opd

namespace opd {
namespace {

TEST(KernelFunction, BoxedKernelCalledUnboxedForAViewResultIsRefused) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_view");
  lib.def("name(Tensor x) -> str")
      .impl("name", DispatchKey::CPU, [](const OperatorHandle&, Stack* s) {
        s->pop_back();
        s->emplace_back(std::string("a name longer than the small-string buffer"));
      });
  float data[1] = {0};
  Tensor x = from_blob(data, std::vector<int64_t>{1}, ScalarType::Float32);
  auto as_view = Dispatcher::singleton()
                     .find_schema_or_throw("test_kernel_fn_view::name", "")
                     .typed<std::string_view(const Tensor&)>();
  try {
    as_view.call(x);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), ::testing::HasSubstr("test_kernel_fn_view::name: called unboxed with a "
                                              "result type that refers to memory it does not own"));
  }
  auto as_string = Dispatcher::singleton()
                       .find_schema_or_throw("test_kernel_fn_view::name", "")
                       .typed<std::string(const Tensor&)>();
  EXPECT_EQ(as_string.call(x), "a name longer than the small-string buffer");
}

}  // namespace
}  // namespace opd
