// The schema-driven binder (opd/bind/binding.h) without plugins: overload resolution on the
// aten schemas the core registers and on operators defined here, argument conversion as
// PyTorch's Python argument parser, error texts, and schema defaults. Moved from
// tests/tools/eval_parser_test.cpp with the binder (issue #30).

#include "opd/bind/binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/bind/host_tensors.h"
#include "error_text.h"
#include "opd/library.h"

namespace opd::bind {
namespace {

using test_util::error_text;
using test_util::floats;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Operators with schemas only: binding needs no kernel.
OPD_LIBRARY(test_eval, m) {
  m.def(
      "defaults(int[2] stride=1, int reduction=Mean, ScalarType dtype=float, float eps=1, "
      "MemoryFormat memory_format=contiguous_format, Device device=\"meta\", "
      "float[] w=[0.5, 2], str mode='none', bool? flag=None) -> int");
  m.def("scale(float factor, complex z=0) -> float");
}

// ---- Overload resolution on the aten schemas (no kernels needed to bind) ----------------------

CallArgs args(std::vector<IValue> positional,
              std::vector<std::pair<std::string, IValue>> keywords = {}) {
  return {std::move(positional), std::move(keywords)};
}

std::string chosen(std::string_view name, const CallArgs& a, FactoryDefaults d = {}) {
  return bind_call(name, a, d).op.operator_name().to_string();
}

TEST(EvalBinding, AddPrefersTensorOverScalarAsPyTorchDoes) {
  Tensor x = floats({1, 2}, {2});
  EXPECT_EQ(chosen("add", args({x, x})), "aten::add.Tensor");
  EXPECT_EQ(chosen("add", args({x, 2})), "aten::add.Scalar");
  EXPECT_EQ(chosen("add", args({x, 2.5})), "aten::add.Scalar");
  EXPECT_EQ(chosen("add", args({x, x}, {{"alpha", 2}})), "aten::add.Tensor");
  EXPECT_EQ(chosen("add", args({x, x}, {{"out", x}})), "aten::add.out");
  EXPECT_EQ(chosen("aten::add.Tensor", args({x, x})), "aten::add.Tensor");
  EXPECT_EQ(chosen("torch.add", args({x, x})), "aten::add.Tensor");
  EXPECT_EQ(chosen("relu.default", args({x})), "aten::relu");
  BoundCall b = bind_call("add", args({x, x}, {{"alpha", 2}}), {});
  ASSERT_EQ(b.stack.size(), 3u);
  EXPECT_TRUE(b.stack[0].to_tensor().is_same(x));
  EXPECT_EQ(b.stack[2], IValue(2));
}

TEST(EvalBinding, ResolveOrdersOverloadsPartially) {
  std::vector<std::string> names;
  for (const auto& op : resolve_operator("add")) names.push_back(op.operator_name().to_string());
  // Sorted by schema text, then add.Scalar after add.Tensor (Scalar where it takes Tensor).
  EXPECT_THAT(names, ElementsAre("aten::add.Tensor", "aten::add.out", "aten::add.Scalar"));
}

TEST(EvalBinding, IntListsVarargsAndBareIntsForFixedSizes) {
  Tensor x = floats({1, 2, 3, 4}, {2, 2});
  BoundCall ones = bind_call("ones", args({2, 3}), {});
  EXPECT_EQ(ones.stack[0], IValue(std::vector<int64_t>{2, 3}));
  EXPECT_EQ(bind_call("ones", args({IValue::make_generic_list({2, 3})}), {}).stack[0],
            IValue(std::vector<int64_t>{2, 3}));
  BoundCall sum = bind_call("sum", args({x, 1}), {});
  EXPECT_EQ(sum.op.operator_name().to_string(), "aten::sum.dim_IntList");
  EXPECT_EQ(sum.stack[1], IValue(std::vector<int64_t>{1})) << "int[1] takes a bare int";
  EXPECT_EQ(chosen("sum", args({x})), "aten::sum");
  EXPECT_EQ(chosen("max", args({x, 1})), "aten::max.dim");
}

TEST(EvalBinding, FactoryDefaultsFillDeviceAndDtypeOnlyWhenNotGiven) {
  Tensor x = floats({1}, {1});
  FactoryDefaults d{Device(DeviceType::Meta), kDouble};
  BoundCall ones = bind_call("ones", args({IValue::make_generic_list({2})}), d);
  const FunctionSchema& s = ones.op.schema();
  EXPECT_EQ(ones.stack[*s.argument_index("device")], IValue(Device(DeviceType::Meta)));
  EXPECT_EQ(ones.stack[*s.argument_index("dtype")], IValue(kDouble));
  BoundCall given = bind_call("ones", args({2}, {{"dtype", IValue(kLong)}, {"device", "cpu"}}), d);
  EXPECT_EQ(given.stack[*s.argument_index("dtype")], IValue(kLong));
  EXPECT_EQ(given.stack[*s.argument_index("device")], IValue(Device(DeviceType::CPU)));
  // Not a factory (it takes a tensor): the defaults stay out.
  BoundCall like = bind_call("ones_like", args({x}), d);
  EXPECT_TRUE(like.stack[*like.op.schema().argument_index("device")].is_none());
}

TEST(EvalBinding, ConversionsFollowThePythonArgParser) {
  Tensor x = floats({1}, {1});
  // int fits float and complex; bool fits neither int nor float; numbers fit no Tensor of relu.
  BoundCall scale = bind_call("test_eval::scale", args({2, 1}), {});
  EXPECT_EQ(scale.stack[0], IValue(2.0));
  EXPECT_EQ(scale.stack[1], IValue(std::complex<double>(1, 0)));
  EXPECT_EQ(error_text<TypeError>([] { bind_call("test_eval::scale", args({true}), {}); }),
            "test_eval::scale(): argument 'factor' (position 1) must be float, not bool");
  // (max.dim alone: max has other overloads, whose reasons the message would list.)
  EXPECT_EQ(error_text<TypeError>([&] {
              bind_call("max.dim", args({x, true}), {});
            }),
            "max.dim(): argument 'dim' (position 2) must be int, not bool");
  EXPECT_EQ(error_text<TypeError>([] { bind_call("relu", args({2}), {}); }),
            "relu(): argument 'self' (position 1) must be Tensor, not int");
  EXPECT_EQ(error_text<TypeError>([&] {
              bind_call("relu", args({x, x}), {});
            }),
            "relu(): takes 1 positional argument but 2 were given");
  EXPECT_EQ(error_text<TypeError>([&] {
              bind_call("relu", args({x}, {{"inplace", true}}), {});
            }),
            "relu(): got an unexpected keyword argument 'inplace'");
  EXPECT_EQ(error_text<TypeError>([&] {
              bind_call("relu", args({x}, {{"self", x}}), {});
            }),
            "relu(): got multiple values for argument 'self'");
  EXPECT_EQ(error_text<TypeError>([&] { bind_call("test_eval::scale", args({}), {}); }),
            "test_eval::scale(): missing required argument 'factor' (position 1)");
}

// Note [Numbers as tensors]: torch.add(x, 2, out=o), torch.add(2, x) and
// torch.div(x, 2, rounding_mode="floor", out=o) take the number as a wrapped number; a Scalar
// overload still wins where there is one, and operators torch does not allow it for refuse it.
TEST(EvalBinding, ArithmeticTakesNumbersAsWrappedNumberTensors) {
  Tensor x = floats({1, 2}, {2});
  EXPECT_EQ(chosen("add", args({x, 2})), "aten::add.Scalar");
  BoundCall out = bind_call("add", args({x, 2}, {{"out", x}}), {});
  EXPECT_EQ(out.op.operator_name().to_string(), "aten::add.out");
  ASSERT_TRUE(out.stack[1].is_tensor());
  const Tensor& two = out.stack[1].to_tensor();
  EXPECT_TRUE(two.unsafe_get_impl()->is_wrapped_number());
  EXPECT_EQ(two.dim(), 0);
  EXPECT_EQ(two.dtype(), kLong);
  EXPECT_EQ(*two.data_ptr<int64_t>(), 2);
  BoundCall half = bind_call("mul", args({x, 0.5}, {{"out", x}}), {});
  EXPECT_EQ(half.op.operator_name().to_string(), "aten::mul.out");
  EXPECT_EQ(half.stack[1].to_tensor().dtype(), kDouble);
  EXPECT_EQ(*half.stack[1].to_tensor().data_ptr<double>(), 0.5);
  EXPECT_EQ(bind_call("sub", args({x, true}, {{"out", x}}), {}).stack[1].to_tensor().dtype(),
            kBool);
  BoundCall left = bind_call("add", args({2, x}), {});
  EXPECT_EQ(left.op.operator_name().to_string(), "aten::add.Tensor");
  EXPECT_TRUE(left.stack[0].to_tensor().unsafe_get_impl()->is_wrapped_number());
  EXPECT_EQ(chosen("div", args({x, 2}, {{"rounding_mode", "floor"}, {"out", x}})),
            "aten::div.out_mode");
  EXPECT_EQ(chosen("floor_divide", args({x, 2}, {{"out", x}})), "aten::floor_divide.out");
  EXPECT_EQ(chosen("true_divide", args({x, 2}, {{"out", x}})), "aten::true_divide.out");
  EXPECT_EQ(chosen("aten::add.out", args({x, 2.5}, {{"out", x}})), "aten::add.out");
  EXPECT_EQ(error_text<TypeError>([] { bind_call("relu", args({2}), {}); }),
            "relu(): argument 'self' (position 1) must be Tensor, not int");
  EXPECT_THAT(error_text<TypeError>([&] {
                bind_call("add", args({x, "a"}, {{"out", x}}), {});
              }),
              HasSubstr("argument 'other' (position 2) must be Tensor, not str"));
}

TEST(EvalBinding, NoMatchListsEveryCandidateSchema) {
  Tensor x = floats({1}, {1});
  std::string e = error_text<TypeError>([&] {
    bind_call("add", args({x, "a"}, {{"alpha", 2}}), {});
  });
  EXPECT_THAT(e, StartsWith("add() received an invalid combination of arguments - got (Tensor, "
                            "str, alpha=int), but expected one of:\n"
                            " * aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) "
                            "-> Tensor\n"
                            "      didn't match because: argument 'other' (position 2) must be "
                            "Tensor, not str\n"));
  EXPECT_THAT(e, HasSubstr(" * aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1)"));
  EXPECT_THAT(e, HasSubstr(" * aten::add.out("));
}

TEST(EvalBinding, UnknownAndAmbiguousOperators) {
  EXPECT_EQ(error_text<ValueError>([] { resolve_operator("nope_nope"); }),
            "opd eval: unknown operator 'nope_nope'");
  EXPECT_EQ(error_text<ValueError>([] { resolve_operator("aten::add.nope"); }),
            "opd eval: unknown operator 'aten::add.nope'");
  Library a(Library::DEF, "test_eval_ns_a");
  a.def("twin(Tensor x) -> Tensor");
  Library b(Library::DEF, "test_eval_ns_b");
  b.def("twin(Tensor x) -> Tensor");
  EXPECT_EQ(error_text<ValueError>([] { resolve_operator("twin"); }),
            "opd eval: 'twin' is ambiguous: it names test_eval_ns_a::twin, test_eval_ns_b::twin; "
            "write the namespace");
  EXPECT_EQ(resolve_operator("test_eval_ns_b::twin")[0].operator_name().to_string(),
            "test_eval_ns_b::twin");
}

TEST(EvalBinding, SchemaDefaultsBecomeValues) {
  BoundCall b = bind_call("test_eval::defaults", args({}), {});
  ASSERT_EQ(b.stack.size(), 9u);
  EXPECT_EQ(b.stack[0], IValue(std::vector<int64_t>{1, 1}));
  EXPECT_EQ(b.stack[1], IValue(1)) << "Mean";
  EXPECT_EQ(b.stack[2], IValue(kFloat));
  EXPECT_EQ(b.stack[3], IValue(1.0));
  EXPECT_EQ(b.stack[4], IValue(MemoryFormat::Contiguous));
  EXPECT_EQ(b.stack[5], IValue(Device(DeviceType::Meta)));
  EXPECT_EQ(b.stack[6], IValue(std::vector<double>{0.5, 2.0}));
  EXPECT_EQ(b.stack[7], IValue("none"));
  EXPECT_TRUE(b.stack[8].is_none());
  BoundCall stride = bind_call("test_eval::defaults", args({3}), {});
  EXPECT_EQ(stride.stack[0], IValue(std::vector<int64_t>{3, 3})) << "int[2] takes a bare int";
}

}  // namespace
}  // namespace opd::bind
