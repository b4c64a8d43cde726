// Boxing (opd/boxing.h): every argument and return type a kernel signature may use survives both
// calling conventions: an unboxed kernel called from a stack (call_unboxed_from_boxed) and a
// boxed kernel called through typed<Sig>() (call_boxed_from_unboxed), including the results that
// refer to their arguments (in-place and out= kernels, views of a string or list argument).
// PyTorch's make_boxed_from_unboxed_functor_test.cpp, for our types.
//
// Each test defines ns::f with a kernel that transforms its argument visibly, then calls it
// unboxed through typed<Sig>() and boxed through a Stack. def(schema, kernel) registers the
// kernel to CompositeImplicitAutograd, which also serves calls without tensor arguments.

#include "opd/boxing.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd {
namespace {

OperatorHandle op(std::string_view name, std::string_view overload = "") {
  return Dispatcher::singleton().find_schema_or_throw(name, overload);
}

Stack call_boxed(std::string_view name, Stack stack) {
  op(name).call_boxed(&stack);
  return stack;
}

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

// The results replace the arguments, which are the top of the stack; what lies below them is
// the caller's and stays, whether the kernel returns fewer values than it takes or more.
TEST(KernelFunctionTypes, ResultsReplaceOnlyTheArguments) {
  Library lib(Library::FRAGMENT, "test_kernel_fn_t_slots");
  lib.def("fewer(Tensor a, Tensor b, int c) -> Tensor",
          [](const Tensor&, const Tensor& b, int64_t) { return b; });
  lib.def("more(int a) -> (int, int, int)",
          [](int64_t a) { return std::tuple<int64_t, int64_t, int64_t>(a, a + 1, a + 2); });
  float buf[4] = {};
  Tensor a = from_blob(buf, {2}, kFloat);
  Tensor b = from_blob(buf + 2, {2}, kFloat);

  Stack s{"below", a, b, int64_t{3}};
  op("test_kernel_fn_t_slots::fewer").call_boxed(&s);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], IValue("below"));
  EXPECT_TRUE(s[1].to_tensor().is_same(b));
  EXPECT_EQ(a.use_count(), 1u) << "the argument the kernel did not return is released";

  Stack t{"below", int64_t{5}};
  op("test_kernel_fn_t_slots::more").call_boxed(&t);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], IValue("below"));
  EXPECT_EQ(t[1], IValue(int64_t{5}));
  EXPECT_EQ(t[2], IValue(int64_t{6}));
  EXPECT_EQ(t[3], IValue(int64_t{7}));
}

}  // namespace
}  // namespace opd
