// KernelFunction: every way of writing a kernel (function pointer, lambda, stateful functor,
// kernel taking DispatchKeySet, boxed function) is callable through both calling conventions,
// and every supported argument and return type survives both (PyTorch's
// kernel_function_test.cpp and make_boxed_from_unboxed_functor_test.cpp, for our types).

#include "opd/kernel_function.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <complex>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
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

Stack call_boxed(std::string_view name, Stack stack) {
  op(name).call_boxed(&stack);
  return stack;
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
              HasSubstr("Tracer: registered at tests/core/kernel_function_test.cpp:"));
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

// ---- Argument and return types through both conventions ------------------------------------
//
// Each test defines ns::f with a kernel that transforms its argument visibly, then calls it
// unboxed through typed<Sig>() and boxed through a Stack. def(schema, kernel) registers the
// kernel to CompositeImplicitAutograd, which also serves calls without tensor arguments.

TEST(KernelFunctionTypes, TensorByValue) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_tensor");
  lib.def("f(Tensor x) -> Tensor", [](Tensor x) { return x; });
  float buf[2] = {};
  Tensor x = from_blob(buf, {2}, kFloat);
  EXPECT_TRUE(op("test_kernel_fn_t_tensor::f").typed<Tensor(Tensor)>().call(x).is_same(x));
  Stack s = call_boxed("test_kernel_fn_t_tensor::f", {x});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].to_tensor().is_same(x));
}

TEST(KernelFunctionTypes, ConstTensorReferenceAndTwoTensors) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_cref");
  lib.def("f(Tensor a, Tensor b) -> Tensor", [](const Tensor& a, const Tensor& b) { return b; });
  float buf[4] = {};
  Tensor a = from_blob(buf, {2}, kFloat);
  Tensor b = from_blob(buf + 2, {2}, kFloat);
  EXPECT_TRUE((op("test_kernel_fn_t_cref::f")
                   .typed<Tensor(const Tensor&, const Tensor&)>()
                   .call(a, b)
                   .is_same(b)));
  Stack s = call_boxed("test_kernel_fn_t_cref::f", {a, b});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].to_tensor().is_same(b));
}

Tensor& fill_(Tensor& self, double value) {
  float* p = self.data_ptr<float>();
  for (int64_t i = 0; i < self.numel(); ++i) p[i] = static_cast<float>(value);
  return self;
}

TEST(KernelFunctionTypes, InPlaceTensorReferenceReturnsSelf) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_inplace");
  lib.def("fill_(Tensor(a!) self, float value) -> Tensor(a!)");
  lib.impl("fill_", DispatchKey::CPU, &fill_);
  float buf[3] = {};
  Tensor x = from_blob(buf, {3}, kFloat);
  OperatorHandle h = op("test_kernel_fn_t_inplace::fill_");

  Tensor& r = h.typed<Tensor&(Tensor&, double)>().call(x, 2.0);
  EXPECT_EQ(&r, &x) << "an in-place kernel called unboxed returns its argument itself";
  EXPECT_EQ(buf[2], 2.0f);

  Stack s{x, 7.0};
  h.call_boxed(&s);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_TRUE(s[0].is_tensor());
  EXPECT_TRUE(s[0].to_tensor().is_same(x)) << "boxed result: " << s[0].repr();
  EXPECT_EQ(buf[0], 7.0f);
}

TEST(KernelFunctionTypes, BoxedInPlaceKernelCalledUnboxedReturnsTheArgument) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_inplace_boxed");
  lib.def("fill_(Tensor(a!) self, float value) -> Tensor(a!)");
  lib.impl("fill_", DispatchKey::CPU, [](const OperatorHandle&, Stack* s) {
    double v = s->back().to_double();
    s->pop_back();
    Tensor self = s->back().to_tensor();
    s->pop_back();
    fill_(self, v);
    s->push_back(self);
  });
  float buf[3] = {};
  Tensor x = from_blob(buf, {3}, kFloat);
  Tensor& r =
      op("test_kernel_fn_t_inplace_boxed::fill_").typed<Tensor&(Tensor&, double)>().call(x, 4.0);
  EXPECT_EQ(&r, &x);
  EXPECT_EQ(buf[1], 4.0f);
}

TEST(KernelFunctionTypes, OutVariantTupleOfTensorReferences) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_out");
  lib.def(
      "split.out(Tensor self, *, Tensor(a!) lo, Tensor(b!) hi) -> (Tensor(a!) lo, Tensor(b!) hi)");
  lib.impl("split.out", DispatchKey::CPU,
           [](const Tensor& self, Tensor& lo, Tensor& hi) -> std::tuple<Tensor&, Tensor&> {
             fill_(lo, 1.0);
             fill_(hi, 2.0);
             return {lo, hi};
           });
  float buf[6] = {};
  Tensor self = from_blob(buf, {2}, kFloat);
  Tensor lo = from_blob(buf + 2, {2}, kFloat);
  Tensor hi = from_blob(buf + 4, {2}, kFloat);
  OperatorHandle h = op("test_kernel_fn_t_out::split", "out");
  auto [rlo, rhi] =
      h.typed<std::tuple<Tensor&, Tensor&>(const Tensor&, Tensor&, Tensor&)>().call(self, lo, hi);
  EXPECT_EQ(&rlo, &lo);
  EXPECT_EQ(&rhi, &hi);
  EXPECT_EQ(buf[5], 2.0f);

  Stack s{self, lo, hi};
  h.call_boxed(&s);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(s[0].is_tensor() && s[0].to_tensor().is_same(lo)) << s[0].repr();
  EXPECT_TRUE(s[1].is_tensor() && s[1].to_tensor().is_same(hi)) << s[1].repr();
}

TEST(KernelFunctionTypes, Int64) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_int");
  lib.def("f(int x) -> int", [](int64_t x) { return x + 1; });
  EXPECT_EQ(op("test_kernel_fn_t_int::f").typed<int64_t(int64_t)>().call(41), 42);
  Stack s = call_boxed("test_kernel_fn_t_int::f", {int64_t{-8}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(int64_t{-7}));
}

TEST(KernelFunctionTypes, Double) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_double");
  lib.def("f(float x) -> float", [](double x) { return x * 2; });
  EXPECT_EQ(op("test_kernel_fn_t_double::f").typed<double(double)>().call(1.25), 2.5);
  Stack s = call_boxed("test_kernel_fn_t_double::f", {0.5});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(1.0));
}

TEST(KernelFunctionTypes, Bool) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_bool");
  lib.def("f(bool x) -> bool", [](bool x) { return !x; });
  EXPECT_FALSE(op("test_kernel_fn_t_bool::f").typed<bool(bool)>().call(true));
  Stack s = call_boxed("test_kernel_fn_t_bool::f", {false});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(true));
}

TEST(KernelFunctionTypes, ComplexDouble) {
  using C = std::complex<double>;
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_complex");
  lib.def("f(complex x) -> complex", [](C x) { return std::conj(x); });
  EXPECT_EQ(op("test_kernel_fn_t_complex::f").typed<C(C)>().call(C(1, 2)), C(1, -2));
  Stack s = call_boxed("test_kernel_fn_t_complex::f", {C(3, -4)});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(C(3, 4)));
}

TEST(KernelFunctionTypes, StringViewArgumentAndStringReturn) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_str");
  lib.def("f(str x) -> str", [](std::string_view x) { return std::string(x) + "!"; });
  EXPECT_EQ(op("test_kernel_fn_t_str::f").typed<std::string(std::string_view)>().call("hi"), "hi!");
  Stack s = call_boxed("test_kernel_fn_t_str::f", {std::string("a string too long for SSO")});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue("a string too long for SSO!"));
}

TEST(KernelFunctionTypes, StringViewReturnIsCopiedBeforeTheArgumentLeavesTheStack) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_str_view");
  lib.def("f(str x) -> str", [](std::string_view x) { return x.substr(1); });
  EXPECT_EQ(
      op("test_kernel_fn_t_str_view::f").typed<std::string_view(std::string_view)>().call("xyz"),
      "yz");
  // Only the stack holds the string, so it is freed when the argument leaves the stack.
  Stack s;
  s.emplace_back(std::string("a string long enough to live on the heap"));
  op("test_kernel_fn_t_str_view::f").call_boxed(&s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(" string long enough to live on the heap"));
}

TEST(KernelFunctionTypes, Scalar) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_scalar");
  lib.def("f(Scalar x) -> Scalar", [](const Scalar& x) {
    return x.is_floating_point() ? Scalar(x.to_double() * 2) : Scalar(x.to_int64() + 1);
  });
  auto f = op("test_kernel_fn_t_scalar::f").typed<Scalar(const Scalar&)>();
  EXPECT_EQ(f.call(Scalar(int64_t{1})), Scalar(int64_t{2}));
  EXPECT_EQ(f.call(Scalar(1.5)), Scalar(3.0));
  Stack s = call_boxed("test_kernel_fn_t_scalar::f", {int64_t{9}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(int64_t{10}));
  s = call_boxed("test_kernel_fn_t_scalar::f", {0.25});
  EXPECT_EQ(s[0], IValue(0.5));
}

TEST(KernelFunctionTypes, ScalarType) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_dtype");
  lib.def("f(ScalarType x) -> ScalarType",
          [](ScalarType x) { return x == kFloat ? kDouble : kLong; });
  EXPECT_EQ(op("test_kernel_fn_t_dtype::f").typed<ScalarType(ScalarType)>().call(kFloat), kDouble);
  Stack s = call_boxed("test_kernel_fn_t_dtype::f", {kInt});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(kLong));
}

TEST(KernelFunctionTypes, Layout) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_layout");
  lib.def("f(Layout x) -> Layout",
          [](Layout x) { return x == Layout::Strided ? Layout::Sparse : Layout::Strided; });
  EXPECT_EQ(op("test_kernel_fn_t_layout::f").typed<Layout(Layout)>().call(Layout::Strided),
            Layout::Sparse);
  Stack s = call_boxed("test_kernel_fn_t_layout::f", {Layout::Mkldnn});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(Layout::Strided));
}

TEST(KernelFunctionTypes, MemoryFormat) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_memfmt");
  lib.def("f(MemoryFormat x) -> MemoryFormat", [](MemoryFormat x) {
    return x == MemoryFormat::Contiguous ? MemoryFormat::ChannelsLast : MemoryFormat::Preserve;
  });
  EXPECT_EQ(op("test_kernel_fn_t_memfmt::f")
                .typed<MemoryFormat(MemoryFormat)>()
                .call(MemoryFormat::Contiguous),
            MemoryFormat::ChannelsLast);
  Stack s = call_boxed("test_kernel_fn_t_memfmt::f", {MemoryFormat::ChannelsLast3d});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(MemoryFormat::Preserve));
}

TEST(KernelFunctionTypes, Device) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_device");
  lib.def("f(Device x) -> Device",
          [](Device d) { return Device(DeviceType::CUDA, static_cast<int8_t>(d.index + 1)); });
  EXPECT_EQ(
      op("test_kernel_fn_t_device::f").typed<Device(Device)>().call(Device(DeviceType::CUDA, 0)),
      Device(DeviceType::CUDA, 1));
  Stack s = call_boxed("test_kernel_fn_t_device::f", {Device("cuda:2")});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(Device("cuda:3")));
}

TEST(KernelFunctionTypes, IntArrayRefArgumentAndVectorReturn) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_intlist");
  lib.def("f(int[] x) -> int[]",
          [](IntArrayRef x) { return std::vector<int64_t>(x.rbegin(), x.rend()); });
  std::vector<int64_t> v{1, 2, 3};
  EXPECT_EQ(op("test_kernel_fn_t_intlist::f").typed<std::vector<int64_t>(IntArrayRef)>().call(v),
            (std::vector<int64_t>{3, 2, 1}));
  Stack s = call_boxed("test_kernel_fn_t_intlist::f", {std::vector<int64_t>{4, 5}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(std::vector<int64_t>{5, 4}));
}

TEST(KernelFunctionTypes, IntVectorByValueAndByConstReference) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_intvec");
  lib.def("f(int[] x, int[] y) -> int", [](std::vector<int64_t> x, const std::vector<int64_t>& y) {
    return static_cast<int64_t>(x.size() * 10 + y.size());
  });
  auto f = op("test_kernel_fn_t_intvec::f")
               .typed<int64_t(std::vector<int64_t>, const std::vector<int64_t>&)>();
  EXPECT_EQ(f.call({1, 2}, {3}), 21);
  Stack s = call_boxed("test_kernel_fn_t_intvec::f",
                       {std::vector<int64_t>{}, std::vector<int64_t>{1, 2, 3}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(int64_t{3}));
}

TEST(KernelFunctionTypes, IntArrayRefReturnIsCopiedBeforeTheArgumentLeavesTheStack) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_intview");
  lib.def("f(int[] x) -> int[]", [](IntArrayRef x) { return x.subspan(1); });
  Stack s;
  s.emplace_back(std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  op("test_kernel_fn_t_intview::f").call_boxed(&s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(std::vector<int64_t>{2, 3, 4, 5, 6}));
}

TEST(KernelFunctionTypes, DoubleList) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_floatlist");
  lib.def("f(float[] x) -> float[]", [](const std::vector<double>& x) {
    std::vector<double> out(x);
    out.push_back(0.5);
    return out;
  });
  EXPECT_EQ(op("test_kernel_fn_t_floatlist::f")
                .typed<std::vector<double>(const std::vector<double>&)>()
                .call({1.5}),
            (std::vector<double>{1.5, 0.5}));
  Stack s = call_boxed("test_kernel_fn_t_floatlist::f", {std::vector<double>{}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(std::vector<double>{0.5}));
}

TEST(KernelFunctionTypes, BoolList) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_boollist");
  lib.def("f(bool[] x) -> bool[]", [](const std::vector<bool>& x) {
    std::vector<bool> out;
    for (bool b : x) out.push_back(!b);
    return out;
  });
  EXPECT_EQ(op("test_kernel_fn_t_boollist::f")
                .typed<std::vector<bool>(const std::vector<bool>&)>()
                .call({true, false}),
            (std::vector<bool>{false, true}));
  Stack s = call_boxed("test_kernel_fn_t_boollist::f", {std::vector<bool>{false, false, true}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(std::vector<bool>{true, true, false}));
}

TEST(KernelFunctionTypes, TensorListDispatchesOnItsElements) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_tensorlist");
  lib.def("f(Tensor[] xs) -> Tensor[]");
  lib.impl("f", DispatchKey::CPU, [](const std::vector<Tensor>& xs) {
    return std::vector<Tensor>(xs.rbegin(), xs.rend());
  });
  lib.impl("f", DispatchKey::CUDA,
           [](const std::vector<Tensor>& xs) { return std::vector<Tensor>{}; });
  float buf[4] = {};
  Tensor a = from_blob(buf, {2}, kFloat);
  Tensor b = from_blob(buf + 2, {2}, kFloat);
  Tensor c = from_blob(buf, {2}, kFloat, Device(DeviceType::CUDA, 0));
  auto f =
      op("test_kernel_fn_t_tensorlist::f").typed<std::vector<Tensor>(const std::vector<Tensor>&)>();
  std::vector<Tensor> r = f.call({a, b});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].is_same(b));
  EXPECT_TRUE(f.call({a, c}).empty()) << "a CUDA element makes the call dispatch to CUDA";

  Stack s = call_boxed("test_kernel_fn_t_tensorlist::f", {std::vector<Tensor>{a, b}});
  ASSERT_EQ(s.size(), 1u);
  ASSERT_TRUE(s[0].is_tensor_list());
  EXPECT_TRUE(s[0].to_tensor_list()[0].is_same(b));
  s = call_boxed("test_kernel_fn_t_tensorlist::f", {std::vector<Tensor>{c}});
  EXPECT_TRUE(s[0].to_tensor_list().empty());
}

TEST(KernelFunctionTypes, TensorSpanArgument) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_tensorspan");
  lib.def("f(Tensor[] xs) -> int",
          [](std::span<const Tensor> xs) { return static_cast<int64_t>(xs.size()); });
  float buf[2] = {};
  std::vector<Tensor> xs{from_blob(buf, {2}, kFloat), from_blob(buf, {1}, kFloat)};
  EXPECT_EQ(op("test_kernel_fn_t_tensorspan::f")
                .typed<int64_t(std::span<const Tensor>)>()
                .call(std::span<const Tensor>(xs)),
            2);
  Stack s = call_boxed("test_kernel_fn_t_tensorspan::f", {xs});
  EXPECT_EQ(s[0], IValue(int64_t{2}));
}

TEST(KernelFunctionTypes, OptionalTensorListDispatchesOnItsDefinedElements) {
  using List = std::vector<std::optional<Tensor>>;
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_opttensorlist");
  lib.def("f(Tensor?[] xs) -> int");
  lib.impl("f", DispatchKey::CPU, [](const List& xs) {
    int64_t defined = 0;
    for (const auto& x : xs) defined += x.has_value();
    return defined;
  });
  lib.impl("f", DispatchKey::Meta, [](const List&) { return int64_t{-1}; });
  float buf[2] = {};
  Tensor a = from_blob(buf, {2}, kFloat);
  Tensor m = from_blob(buf, {2}, kFloat, Device(DeviceType::Meta));
  auto f = op("test_kernel_fn_t_opttensorlist::f").typed<int64_t(const List&)>();
  EXPECT_EQ(f.call({a, std::nullopt, a}), 2);
  EXPECT_EQ(f.call({std::nullopt, m}), -1);
  Stack s = call_boxed("test_kernel_fn_t_opttensorlist::f", {List{std::nullopt, a}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue(int64_t{1}));
  s = call_boxed("test_kernel_fn_t_opttensorlist::f", {List{m}});
  EXPECT_EQ(s[0], IValue(int64_t{-1}));
}

TEST(KernelFunctionTypes, OptionalTensor) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_opttensor");
  lib.def("f(Tensor? x) -> Tensor?", [](const std::optional<Tensor>& x) { return x; });
  float buf[2] = {};
  Tensor a = from_blob(buf, {2}, kFloat);
  auto f = op("test_kernel_fn_t_opttensor::f")
               .typed<std::optional<Tensor>(const std::optional<Tensor>&)>();
  std::optional<Tensor> r = f.call(a);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->is_same(a));
  EXPECT_FALSE(f.call(std::nullopt).has_value());
  Stack s = call_boxed("test_kernel_fn_t_opttensor::f", {a});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].to_tensor().is_same(a));
  s = call_boxed("test_kernel_fn_t_opttensor::f", {IValue()});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].is_none());
}

TEST(KernelFunctionTypes, OptionalInt) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_optint");
  lib.def("f(int? x) -> int?", [](std::optional<int64_t> x) -> std::optional<int64_t> {
    if (!x) return 0;
    if (*x == 0) return std::nullopt;
    return *x * 2;
  });
  auto f = op("test_kernel_fn_t_optint::f").typed<std::optional<int64_t>(std::optional<int64_t>)>();
  EXPECT_EQ(f.call(21), 42);
  EXPECT_EQ(f.call(std::nullopt), 0);
  EXPECT_EQ(f.call(0), std::nullopt);
  EXPECT_EQ(call_boxed("test_kernel_fn_t_optint::f", {int64_t{3}})[0], IValue(int64_t{6}));
  EXPECT_EQ(call_boxed("test_kernel_fn_t_optint::f", {IValue()})[0], IValue(int64_t{0}));
  EXPECT_TRUE(call_boxed("test_kernel_fn_t_optint::f", {int64_t{0}})[0].is_none());
}

TEST(KernelFunctionTypes, TupleReturn) {
  using Ret = std::tuple<Tensor, int64_t, double>;
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_tuple");
  lib.def("f(Tensor x, int n) -> (Tensor, int, float)",
          [](const Tensor& x, int64_t n) { return Ret(x, n + 1, 0.5 * n); });
  float buf[2] = {};
  Tensor x = from_blob(buf, {2}, kFloat);
  auto [t, i, d] = op("test_kernel_fn_t_tuple::f").typed<Ret(const Tensor&, int64_t)>().call(x, 4);
  EXPECT_TRUE(t.is_same(x));
  EXPECT_EQ(i, 5);
  EXPECT_EQ(d, 2.0);
  Stack s = call_boxed("test_kernel_fn_t_tuple::f", {x, int64_t{2}});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].to_tensor().is_same(x));
  EXPECT_EQ(s[1], IValue(int64_t{3}));
  EXPECT_EQ(s[2], IValue(1.0));
}

TEST(KernelFunctionTypes, BoxedKernelWithTupleReturnCalledUnboxed) {
  using Ret = std::tuple<Tensor, int64_t>;
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_tuple_boxed");
  lib.def("f(Tensor x, int n) -> (Tensor, int)");
  lib.impl("f", DispatchKey::CPU, [](const OperatorHandle&, Stack* s) {
    int64_t n = s->back().to_int();
    s->pop_back();  // x stays: it is the first result
    s->push_back(n * 10);
  });
  float buf[2] = {};
  Tensor x = from_blob(buf, {2}, kFloat);
  auto [t, n] =
      op("test_kernel_fn_t_tuple_boxed::f").typed<Ret(const Tensor&, int64_t)>().call(x, 4);
  EXPECT_TRUE(t.is_same(x));
  EXPECT_EQ(n, 40);
}

TEST(KernelFunctionTypes, VoidReturn) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_void");
  static int64_t seen = 0;
  lib.def("f(Tensor x, int n) -> ()", [](const Tensor&, int64_t n) { seen = n; });
  float buf[2] = {};
  Tensor x = from_blob(buf, {2}, kFloat);
  op("test_kernel_fn_t_void::f").typed<void(const Tensor&, int64_t)>().call(x, 6);
  EXPECT_EQ(seen, 6);
  Stack s = call_boxed("test_kernel_fn_t_void::f", {x, int64_t{7}});
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(seen, 7);
}

TEST(KernelFunctionTypes, ManyArgumentsOfMixedTypes) {
  using Sig = std::string(const Tensor&, int64_t, double, bool, std::string_view, ScalarType,
                          std::optional<int64_t>, IntArrayRef);
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_mixed");
  lib.def("f(Tensor x, int a, float b, bool c, str d, ScalarType e, int? f, int[] g) -> str",
          [](const Tensor& x, int64_t a, double b, bool c, std::string_view d, ScalarType e,
             std::optional<int64_t> f, IntArrayRef g) {
            return fmt::format("{} {} {} {} {} {} {}", x.numel(), a, b, c, d, f.value_or(-1),
                               g.size()) +
                   (e == kDouble ? " double" : " other");
          });
  float buf[3] = {};
  Tensor x = from_blob(buf, {3}, kFloat);
  std::vector<int64_t> g{1, 2};
  EXPECT_EQ(op("test_kernel_fn_t_mixed::f")
                .typed<Sig>()
                .call(x, 1, 2.5, true, "s", kDouble, std::nullopt, g),
            "3 1 2.5 true s -1 2 double");
  Stack s = call_boxed("test_kernel_fn_t_mixed::f", {x, int64_t{1}, 2.5, false, "t", kFloat,
                                                     int64_t{4}, std::vector<int64_t>{}});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], IValue("3 1 2.5 false t 4 0 other"));
}

// ---- Boxed argument checking ----------------------------------------------------------------

class BoxedArgumentChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    lib_.def("add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor",
             [](const Tensor& self, const Tensor&, const Scalar&) { return self; });
    lib_.def("opt(Tensor? x, int[] sizes) -> ()", [](const std::optional<Tensor>&, IntArrayRef) {});
  }
  Library lib_{Library::FRAGMENT, "test_kernel_fn_check"};
  float buf_[2] = {};
  Tensor x_ = from_blob(buf_, {2}, kFloat);
};

TEST_F(BoxedArgumentChecks, WrongArgumentTypeThrowsTypeErrorNamingOpArgumentAndPosition) {
  Stack s{x_, int64_t{1}, int64_t{1}};
  try {
    op("test_kernel_fn_check::add").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("test_kernel_fn_check::add: argument 'other' (position 2) must "
                                   "be Tensor, not int"));
  }
}

TEST_F(BoxedArgumentChecks, ScalarArgumentRejectsAString) {
  Stack s{x_, x_, "two"};
  try {
    op("test_kernel_fn_check::add").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("argument 'alpha' (position 3) must be Scalar, not str"));
  }
}

TEST_F(BoxedArgumentChecks, TooFewArgumentsThrowsTypeError) {
  Stack s{x_};
  try {
    op("test_kernel_fn_check::add").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("test_kernel_fn_check::add: expected 3 arguments"));
    EXPECT_THAT(e.msg(), HasSubstr("but the stack holds 1"));
  }
}

TEST_F(BoxedArgumentChecks, OptionalAcceptsNoneAndRejectsOtherTypes) {
  Stack ok{IValue(), std::vector<int64_t>{1}};
  EXPECT_NO_THROW(op("test_kernel_fn_check::opt").call_boxed(&ok));
  Stack bad{int64_t{3}, std::vector<int64_t>{1}};
  try {
    op("test_kernel_fn_check::opt").call_boxed(&bad);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("argument 'x' (position 1) must be Tensor?, not int"));
  }
}

TEST_F(BoxedArgumentChecks, ListElementTypeIsChecked) {
  Stack s{x_, std::vector<double>{1.0}};
  try {
    op("test_kernel_fn_check::opt").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("argument 'sizes' (position 2) must be int[], not float[]"));
  }
}

TEST_F(BoxedArgumentChecks, ARefusedCallLeavesTheStackUntouched) {
  Stack s{x_, int64_t{1}, int64_t{1}};
  EXPECT_THROW(op("test_kernel_fn_check::add").call_boxed(&s), TypeError);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].to_tensor().is_same(x_));
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
