// opd::fx: torch.fx's naming and code printing on graphs built by hand (the texts are torch
// 1.13's make_fx output for the same programs, with opdispatch for torch), running a graph
// again, and the capture mode recording the operators a program runs, forward and backward.

#include "opd/fx/graph.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "opd/bind/tensor_values.h"
#include "opd/fx/capture.h"
#include "opd/opd.h"

namespace opd::fx {
namespace {

OperatorHandle op(const char* name, const char* overload = "") {
  return Dispatcher::singleton().find_schema_or_throw(name, overload);
}

void load_plugins() {
  for (const PluginStatus& s : plugins().load_default()) {
    if (s.name == "cpu" || s.name == "autograd" || s.name == "composite") {
      ASSERT_EQ(s.state, PluginState::Loaded) << s.name << ": " << s.reason;
    }
  }
}

TEST(FxGraph, PrintsAsTorchFx) {
  Graph g;
  const Node& x = g.placeholder("x_1");
  const Node& y = g.placeholder("y_1");
  const Node& add = g.call_function(op("aten::add", "Tensor"), {Arg::of(x), Arg::of(y)});
  const Node& relu = g.call_function(op("aten::relu"), {Arg::of(add)});
  g.output(Arg::of(relu));
  EXPECT_EQ(add.name(), "add");
  EXPECT_EQ(add.target_string(), "opdispatch.ops.aten.add.Tensor");
  EXPECT_EQ(g.code(),
            "\n\n\ndef forward(self, x_1, y_1):\n"
            "    add = opdispatch.ops.aten.add.Tensor(x_1, y_1);  x_1 = y_1 = None\n"
            "    relu = opdispatch.ops.aten.relu.default(add);  add = None\n"
            "    return relu\n    ");
  EXPECT_EQ(g.readable("f"),
            "class f(torch.nn.Module):\n"
            "    def forward(self, x_1, y_1):\n"
            "        \n"
            "        # No stacktrace found for following nodes \n"
            "        add = opdispatch.ops.aten.add.Tensor(x_1, y_1);  x_1 = y_1 = None\n"
            "        relu = opdispatch.ops.aten.relu.default(add);  add = None\n"
            "        return relu\n"
            "        ");
}

TEST(FxGraph, NamesShadowNoBuiltinAndKeepTheirSuffix) {
  Graph g;
  // make_fx(lambda x, sum, y=2: x.sum() + sum + y): the placeholder sum_1 keeps its name, the
  // node of aten::sum cannot be `sum` (a builtin) nor sum_1 (taken).
  const Node& x = g.placeholder("x_1");
  const Node& s = g.placeholder("sum_1");
  g.placeholder("y_1", IValue(int64_t{2}));
  const Node& sum = g.call_function(op("aten::sum"), {Arg::of(x)});
  const Node& add = g.call_function(op("aten::add", "Tensor"), {Arg::of(sum), Arg::of(s)});
  const Node& add1 = g.call_function(op("aten::add", "Tensor"), {Arg::of(add), Arg::of(IValue(3))});
  g.output(Arg::of(add1));
  EXPECT_EQ(sum.name(), "sum_2");
  EXPECT_EQ(add1.name(), "add_1");
  // torch.fx's _Namespace: illegal characters, a leading digit, keywords, a suffix counted on.
  Graph names;
  EXPECT_EQ(names.placeholder("x_1").name(), "x_1");
  EXPECT_EQ(names.placeholder("a.b-+c").name(), "a_b_c");
  EXPECT_EQ(names.placeholder("1x").name(), "_1x");
  EXPECT_EQ(names.placeholder("if").name(), "if_1");
  EXPECT_EQ(names.placeholder("x_1").name(), "x_2");
  EXPECT_EQ(names.placeholder("x_07").name(), "x_7");
  EXPECT_EQ(g.code(),
            "\n\n\ndef forward(self, x_1, sum_1, y_1 = 2):\n"
            "    sum_2 = opdispatch.ops.aten.sum.default(x_1);  x_1 = None\n"
            "    add = opdispatch.ops.aten.add.Tensor(sum_2, sum_1);  sum_2 = sum_1 = None\n"
            "    add_1 = opdispatch.ops.aten.add.Tensor(add, 3);  add = None\n"
            "    return add_1\n    ");
}

TEST(FxGraph, PrintsConstantsKeywordsGetitemAndTuples) {
  Graph g;
  const Node& x = g.placeholder("x_1");
  const Node& ones = g.call_function(op("aten::ones"), {Arg::of(IValue(std::vector<int64_t>{3}))},
                                     {{"dtype", Arg::of(IValue(ScalarType::Float64))},
                                      {"device", Arg::of(IValue(Device("cpu")))},
                                      {"pin_memory", Arg::of(IValue(false))}});
  const Node& mx = g.call_function(op("aten::max", "dim"), {Arg::of(x), Arg::of(IValue(0))});
  const Node& v = g.getitem(mx, 0);
  const Node& i = g.getitem(mx, 1);
  const Node& mul = g.call_function(op("aten::mul", "Tensor"), {Arg::of(v), Arg::of(IValue(1e-5))});
  const Node& cat = g.call_function(op("aten::cat"), {Arg::list({Arg::of(mul), Arg::of(mul)})});
  const Node& inf =
      g.call_function(op("aten::mul", "Tensor"), {Arg::of(cat), Arg::of(IValue(1.0 / 0.0))});
  g.output(Arg::tuple({Arg::of(ones), Arg::of(i), Arg::of(inf), Arg::of(IValue())}));
  EXPECT_EQ(g.code(),
            "\n\n\ndef forward(self, x_1):\n"
            "    ones = opdispatch.ops.aten.ones.default([3], dtype = opdispatch.float64, "
            "device = device(type='cpu'), pin_memory = False)\n"
            "    max_1 = opdispatch.ops.aten.max.dim(x_1, 0);  x_1 = None\n"
            "    getitem = max_1[0]\n"
            "    getitem_1 = max_1[1];  max_1 = None\n"
            "    mul = opdispatch.ops.aten.mul.Tensor(getitem, 1e-05);  getitem = None\n"
            "    cat = opdispatch.ops.aten.cat.default([mul, mul]);  mul = None\n"
            "    mul_1 = opdispatch.ops.aten.mul.Tensor(cat, inf);  cat = None\n"
            "    return (ones, getitem_1, mul_1, None)\n    ");
  Graph empty;
  empty.placeholder("x_1");
  empty.output(Arg::tuple({Arg::of(*empty.nodes()[0])}));
  EXPECT_EQ(empty.code(), "\n\n\ndef forward(self, x_1):\n    return (x_1,)\n    ");
  EXPECT_THROW(empty.output(Arg::of(IValue())), Error);
}

TEST(FxGraph, PrintsThePytreeCodeForStructuredInputs) {
  Graph g;
  g.set_pytree_arguments({"xs", "y"});
  const Node& x1 = g.placeholder("xs_1");
  const Node& x2 = g.placeholder("xs_1");
  const Node& y = g.placeholder("y_1");
  const Node& mul = g.call_function(op("aten::mul", "Tensor"), {Arg::of(x2), Arg::of(y)});
  const Node& add = g.call_function(op("aten::add", "Tensor"), {Arg::of(x1), Arg::of(mul)});
  g.output(Arg::tuple({Arg::of(add), Arg::list({Arg::of(x1)})}));
  EXPECT_EQ(g.code(),
            "\n\n\ndef forward(self, xs, y):\n"
            "    xs_1, xs_2, y_1, = fx_pytree.tree_flatten_spec([xs, y], self._in_spec)\n"
            "    mul = opdispatch.ops.aten.mul.Tensor(xs_2, y_1);  xs_2 = y_1 = None\n"
            "    add = opdispatch.ops.aten.add.Tensor(xs_1, mul);  mul = None\n"
            "    return pytree.tree_unflatten([add, xs_1], self._out_spec)\n    ");
}

TEST(FxGraph, RunsItsOperatorsAgain) {
  load_plugins();
  Graph g;
  const Node& x = g.placeholder("x_1");
  const Node& y = g.placeholder("y_1", IValue(2.0));
  const Node& mul = g.call_function(op("aten::mul", "Tensor"), {Arg::of(x), Arg::of(y)});
  const Node& mx = g.call_function(op("aten::max", "dim"), {Arg::of(mul), Arg::of(IValue(0))});
  const Node& idx = g.getitem(mx, 1);
  const Node& cat = g.call_function(op("aten::cat"), {Arg::list({Arg::of(mul), Arg::of(mul)})});
  g.output(Arg::tuple({Arg::of(cat), Arg::of(idx)}));
  Tensor in = arange(0, 3, 1, TensorOptions().dtype(ScalarType::Float32));
  IValue out = g.run({IValue(in)});
  ASSERT_TRUE(out.is_tuple());
  EXPECT_EQ(out.to_tuple()[0].to_tensor().sizes(), (std::vector<int64_t>{6}));
  EXPECT_EQ(out.to_tuple()[0].to_tensor().sum().item<float>(), 12.0f);
  EXPECT_EQ(out.to_tuple()[1].to_tensor().item<int64_t>(), 2);
  EXPECT_THROW(g.run({}), TypeError);
}

TEST(FxCapture, RecordsForwardAndBackwardBelowAutograd) {
  load_plugins();
  Tensor w = ones({3}).requires_grad_();
  std::shared_ptr<Graph> g = capture({{"w", IValue(w)}}, [&] {
    Tensor loss = (w * w).sum();
    loss.backward();
    return IValue(w.grad());
  });
  std::string code = g->code();
  EXPECT_NE(code.find("def forward(self, w_1):\n"
                      "    mul = opdispatch.ops.aten.mul.Tensor(w_1, w_1)\n"
                      "    sum_1 = opdispatch.ops.aten.sum.default(mul);  mul = None\n"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("opdispatch.ops.aten.ones_like.default(sum_1"), std::string::npos) << code;
  // Run again on new weights: the joint graph gives the gradient 2w.
  Tensor w2 = full({3}, 3.0);
  IValue grad = g->run({IValue(w2)});
  EXPECT_EQ(grad.to_tensor().sum().item<float>(), 18.0f);
}

TEST(FxCapture, TensorsFromOutsideAreAttributesAndWrappedNumbersNumbers) {
  load_plugins();
  Tensor x = ones({2});
  Tensor outside = full({2}, 5.0);
  std::shared_ptr<Graph> g = capture({{"x", IValue(x)}}, [&] {
    // The 2 a wrapped number, as Python's `x * 2` passes it.
    return IValue((x + outside) * bind::wrapped_number(Scalar(int64_t{2})));
  });
  EXPECT_EQ(g->code(),
            "\n\n\ndef forward(self, x_1):\n"
            "    _tensor_constant0 = self._tensor_constant0\n"
            "    add = opdispatch.ops.aten.add.Tensor(x_1, _tensor_constant0);  x_1 = "
            "_tensor_constant0 = None\n"
            "    mul = opdispatch.ops.aten.mul.Tensor(add, 2);  add = None\n"
            "    return mul\n    ");
  ASSERT_EQ(g->attributes().count("_tensor_constant0"), 1u);
  EXPECT_EQ(g->run({IValue(full({2}, 2.0))}).to_tensor().sum().item<float>(), 28.0f);
}

TEST(FxCapture, RecordsOnlyItsOwnThread) {
  load_plugins();
  Tensor x = ones({2});
  std::atomic<bool> capturing{false}, done{false};
  std::thread other([&] {
    while (!capturing.load()) std::this_thread::yield();
    for (int i = 0; i < 50; ++i) (void)x.exp();  // concurrent with the capture, not in it
    done = true;
  });
  std::shared_ptr<Graph> g = capture({{"x", IValue(x)}}, [&] {
    capturing = true;
    Tensor y = x.neg();
    while (!done.load()) std::this_thread::yield();
    return IValue(y);
  });
  other.join();
  EXPECT_EQ(g->code(),
            "\n\n\ndef forward(self, x_1):\n"
            "    neg = opdispatch.ops.aten.neg.default(x_1);  x_1 = None\n"
            "    return neg\n    ");
}

TEST(FxCapture, AModePushedOnAnotherThreadIsRefused) {
  load_plugins();
  auto mode = std::make_shared<CaptureMode>();
  Tensor x = ones({2});
  mode->add_input("x", IValue(x));
  std::string error;
  std::thread other([&] {
    DispatchModeGuard guard(mode);
    try {
      (void)x.neg();
    } catch (const Error& e) {
      error = e.what();
    }
  });
  other.join();
  EXPECT_NE(error.find("the capture mode of one thread was pushed on another"), std::string::npos)
      << error;
  EXPECT_EQ(dispatch_mode_stack_len(), 0u);
}

}  // namespace
}  // namespace opd::fx
