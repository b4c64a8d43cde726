// Custom autograd functions (opd::autograd::Function, opd/autograd_function.h, and the autograd
// plugin's node, plugins/autograd/custom_function.cpp): gradients checked numerically, double
// backward, the context (saved tensors and data, needs_input_grad, mark_dirty,
// mark_non_differentiable, set_materialize_grads), PyTorch's errors, Meta tensors, and an
// operator whose Autograd kernel is a Function.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gradcheck.h"
#include "opd/autograd.h"
#include "opd/dispatcher.h"
#include "opd/generator.h"
#include "opd/library.h"
#include "opd/plugin_manager.h"

namespace opd {
namespace {

using autograd::AutogradContext;
using autograd::tensor_list;
using test::leaf;
using ::testing::HasSubstr;

class CustomFunction : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plugins().load_default();
    manual_seed(0);
  }
};

// The message of what f throws, without the "(raised at file:line)" of an opd::Error.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.msg();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// y = x * s, s kept in saved_data.
struct Scale : autograd::Function<Scale> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double s) {
    ctx->saved_data["s"] = s;
    return x * s;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    return {grads[0] * ctx->saved_data["s"].to_double(), Tensor()};
  }
};

// x * y and x + y, both inputs saved; the backward uses dispatched operators, so it is
// differentiable itself. Records what needs_input_grad said.
struct MulAdd : autograd::Function<MulAdd> {
  static inline std::vector<bool> seen_in_forward, seen_in_backward;
  static tensor_list forward(AutogradContext* ctx, const Tensor& x, const Tensor& y) {
    ctx->save_for_backward({x, y});
    seen_in_forward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    return {x * y, x + y};
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    seen_in_backward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    tensor_list saved = ctx->get_saved_variables();
    const Tensor& x = saved[0];
    const Tensor& y = saved[1];
    Tensor gx = ctx->needs_input_grad(0) ? grads[0] * y + grads[1] : Tensor();
    Tensor gy = ctx->needs_input_grad(1) ? grads[0] * x + grads[1] : Tensor();
    return {gx, gy};
  }
};

TEST_F(CustomFunction, GradientsMatchFiniteDifferences) {
  Tensor x = leaf({3});
  EXPECT_TRUE(
      test::gradcheck([](const std::vector<Tensor>& in) { return Scale::apply(in[0], 2.5); }, {x}));
  Tensor a = leaf({2, 3});
  Tensor b = leaf({2, 3});
  EXPECT_TRUE(test::gradcheck(
      [](const std::vector<Tensor>& in) { return MulAdd::apply(in[0], in[1]); }, {a, b}));
}

TEST_F(CustomFunction, BackwardWrittenWithOperatorsIsDifferentiable) {
  Tensor a = leaf({3});
  Tensor b = leaf({3});
  EXPECT_TRUE(test::gradgradcheck(
      [](const std::vector<Tensor>& in) { return MulAdd::apply(in[0], in[1])[0]; }, {a, b}));
}

TEST_F(CustomFunction, TheNodeIsNamedAfterTheFunction) {
  Tensor x = leaf({2});
  Tensor y = Scale::apply(x, 2.0);
  EXPECT_EQ(autograd::grad_fn_name(y), "CppNode<opd::(anonymous namespace)::Scale>");
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
}

TEST_F(CustomFunction, NoHistoryWithoutGradOrUnderNoGrad) {
  Tensor x = ones({2}, TensorOptions().dtype(kDouble));
  EXPECT_FALSE(Scale::apply(x, 2.0).requires_grad());
  Tensor w = leaf({2});
  NoGradGuard no_grad;
  Tensor y = Scale::apply(w, 2.0);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(test::detail::flat(y), test::detail::flat(w * 2.0));
}

TEST_F(CustomFunction, NeedsInputGradInForwardAndBackward) {
  Tensor x = leaf({2});
  Tensor y = ones({2}, TensorOptions().dtype(kDouble));
  tensor_list out = MulAdd::apply(x, y);
  EXPECT_EQ(MulAdd::seen_in_forward, (std::vector<bool>{true, false}));
  out[0].sum().backward();
  EXPECT_EQ(MulAdd::seen_in_backward, (std::vector<bool>{true, false}));
  // grads[0] * y + grads[1], the second materialized as zeros.
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{1, 1}));
}

// Doubles x in place and says so.
struct DoubleInPlace : autograd::Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2.0);
    ctx->mark_dirty({x});
    return x;
  }
  static tensor_list backward(AutogradContext*, tensor_list grads) { return {grads[0] * 2.0}; }
};

TEST_F(CustomFunction, MarkDirtyRebasesTheInputsHistory) {
  Tensor w = leaf({3});
  Tensor x = w * 1.0;  // not a leaf: may be changed in place
  const uint32_t version = x.version();
  Tensor y = DoubleInPlace::apply(x);
  EXPECT_TRUE(y.is_same(x));
  EXPECT_GT(x.version(), version);
  EXPECT_THAT(autograd::grad_fn_name(x), HasSubstr("DoubleInPlace"));
  y.sum().backward();
  EXPECT_EQ(test::detail::flat(w.grad()), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(error_of([&] { DoubleInPlace::apply(w); }),
            "a leaf Variable that requires grad has been used in an in-place operation.");
}

// Returns a value and a non-differentiable mask of it.
struct WithMask : autograd::Function<WithMask> {
  static tensor_list forward(AutogradContext* ctx, const Tensor& x) {
    Tensor mask = _to_copy(gt(x, 0.0), TensorOptions().dtype(kDouble));
    ctx->mark_non_differentiable({mask});
    return {x * 3.0, mask};
  }
  static tensor_list backward(AutogradContext*, tensor_list grads) {
    EXPECT_TRUE(grads[1].defined());  // materialized, though unused
    return {grads[0] * 3.0};
  }
};

TEST_F(CustomFunction, NonDifferentiableOutputsDoNotRequireGrad) {
  Tensor x = leaf({4});
  tensor_list out = WithMask::apply(x);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  out[0].sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>(4, 3.0)));
}

// Sees undefined gradients for outputs backward did not reach.
struct Unmaterialized : autograd::Function<Unmaterialized> {
  static inline bool second_defined = true;
  static tensor_list forward(AutogradContext* ctx, const Tensor& x) {
    ctx->set_materialize_grads(false);
    return {x * 1.0, x * 2.0};
  }
  static tensor_list backward(AutogradContext*, tensor_list grads) {
    second_defined = grads[1].defined();
    return {grads[0]};
  }
};

TEST_F(CustomFunction, SetMaterializeGradsFalsePassesUndefinedGradients) {
  Tensor x = leaf({2});
  Unmaterialized::apply(x)[0].sum().backward();
  EXPECT_FALSE(Unmaterialized::second_defined);
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{1, 1}));
}

// Passes no gradient on: what it returns reaches its input's history undefined (PyTorch's
// UndefinedGrad).
struct DropsGradient : autograd::Function<DropsGradient> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x * 1.0; }
  static tensor_list backward(AutogradContext*, tensor_list) { return {Tensor()}; }
};

// Counts its backward calls and returns ones whatever it receives.
struct CountsBackward : autograd::Function<CountsBackward> {
  static inline int calls = 0;
  static inline bool got_zeros = false;
  static Tensor forward(AutogradContext* ctx, const Tensor& x, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return x * 1.0;
  }
  static tensor_list backward(AutogradContext*, tensor_list grads) {
    ++calls;
    got_zeros = grads[0].defined() && grads[0].sum().item<float>() == 0.0f;
    return {ones({2}), Tensor()};
  }
};

TEST_F(CustomFunction, BackwardRunsWhenNoGradientReachedIt) {
  // As PyTorch's CppNode: called with zeros (or undefined gradients), not skipped.
  for (bool materialize : {true, false}) {
    CountsBackward::calls = 0;
    Tensor x = leaf({2});
    DropsGradient::apply(CountsBackward::apply(x, materialize)).sum().backward();
    EXPECT_EQ(CountsBackward::calls, 1);
    EXPECT_EQ(CountsBackward::got_zeros, materialize);
    EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{1, 1}));
  }
}

// Saves its input, which the caller then changes in place.
struct SavesInput : autograd::Function<SavesInput> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    return {grads[0] * 2.0 * ctx->get_saved_variables()[0]};
  }
};

TEST_F(CustomFunction, AnInputChangedInPlaceAfterSavingFailsAtBackward) {
  Tensor w = leaf({2});
  Tensor x = w * 1.0;
  Tensor y = SavesInput::apply(x);
  x.add_(1.0);
  EXPECT_THAT(error_of([&] { y.sum().backward(); }),
              HasSubstr("one of the variables needed for gradient computation has been modified "
                        "by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of "
                        "MulBackward1, is at version 1; expected version 0 instead."));
}

TEST_F(CustomFunction, SavedTensorsAreFreedAfterBackward) {
  Tensor x = leaf({2});
  Tensor y = SavesInput::apply(x).sum();
  y.backward();
  EXPECT_THAT(error_of([&] { y.backward(); }),
              HasSubstr("Trying to backward through the graph a second time"));
  Tensor z = SavesInput::apply(x).sum();
  z.backward({}, /*retain_graph=*/true);
  z.backward();
  EXPECT_EQ(test::detail::flat(x.grad()), test::detail::flat(x * 2.0 * 3.0));  // 2x, three times
}

struct TooFewGradients : autograd::Function<TooFewGradients> {
  static Tensor forward(AutogradContext*, const Tensor& x, const Tensor& y) { return x * y; }
  static tensor_list backward(AutogradContext*, tensor_list grads) { return {grads[0]}; }
};

struct GradientForANumber : autograd::Function<GradientForANumber> {
  static Tensor forward(AutogradContext*, const Tensor& x, double s) { return x * s; }
  static tensor_list backward(AutogradContext*, tensor_list grads) { return {grads[0], grads[0]}; }
};

TEST_F(CustomFunction, BackwardReturningTheWrongGradientsFailsWithPyTorchsText) {
  Tensor x = leaf({2});
  Tensor y = leaf({2});
  EXPECT_EQ(error_of([&] { TooFewGradients::apply(x, y).sum().backward(); }),
            "function CppNode<opd::(anonymous namespace)::TooFewGradients> returned an incorrect "
            "number of gradients (expected 2, got 1)");
  EXPECT_EQ(error_of([&] { GradientForANumber::apply(x, 2.0).sum().backward(); }),
            "function CppNode<opd::(anonymous namespace)::GradientForANumber> returned a gradient "
            "different than None at position 2, but the corresponding forward input was not a "
            "Variable");
}

// Returns its input unchanged.
struct Identity : autograd::Function<Identity> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x; }
  static tensor_list backward(AutogradContext*, tensor_list grads) { return {grads[0] * 5.0}; }
};

TEST_F(CustomFunction, AnInputReturnedAsIsComesBackAsAViewWithItsOwnHistory) {
  Tensor x = leaf({2});
  Tensor y = Identity::apply(x);
  EXPECT_FALSE(y.is_same(x));
  EXPECT_EQ(y.storage().data(), x.storage().data());
  EXPECT_THAT(autograd::grad_fn_name(y), HasSubstr("Identity"));
  EXPECT_TRUE(x.is_leaf());
  y.sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{5, 5}));
}

TEST_F(CustomFunction, WorksOnMetaTensors) {
  Tensor a = empty({2, 3}, TensorOptions().dtype(kDouble).device(kMeta)).requires_grad_();
  Tensor b = empty({2, 3}, TensorOptions().dtype(kDouble).device(kMeta)).requires_grad_();
  tensor_list out = MulAdd::apply(a, b);
  (out[0] + out[1]).sum().backward();
  ASSERT_TRUE(a.grad().defined());
  EXPECT_TRUE(a.grad().is_meta());
  EXPECT_EQ(a.grad().sizes().vec(), (std::vector<int64_t>{2, 3}));
}

// An operator whose Autograd kernel is a Function: gradients wherever it is called from.
struct ScaleOp : autograd::Function<ScaleOp> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double s) {
    ctx->saved_data["s"] = s;
    // Runs below autograd: forward records nothing.
    return Dispatcher::singleton()
        .find_schema_or_throw("test_custom_function::scale", "")
        .typed<Tensor(const Tensor&, double)>()
        .call(x, s);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    return {grads[0] * ctx->saved_data["s"].to_double(), Tensor()};
  }
};

TEST_F(CustomFunction, AnOperatorsAutogradKernelFromAFunction) {
  Library def(Library::DEF, "test_custom_function");
  def.def("scale(Tensor x, float s) -> Tensor");
  def.impl("scale", DispatchKey::CPU, [](const Tensor& x, double s) { return x * s; });
  def.impl("scale", DispatchKey::Autograd, autograd::function_kernel<ScaleOp>());
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_custom_function::scale", "")
                .typed<Tensor(const Tensor&, double)>();
  Tensor x = leaf({3});
  Tensor y = op.call(x, 4.0);
  EXPECT_THAT(autograd::grad_fn_name(y), HasSubstr("ScaleOp"));
  y.sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{4, 4, 4}));
  // Boxed too (opd eval, Python).
  Stack s{IValue(x), IValue(0.5)};
  op.call_boxed(&s);
  EXPECT_THAT(autograd::grad_fn_name(s.back().to_tensor()), HasSubstr("ScaleOp"));
}

TEST_F(CustomFunction, ACapsuleOfAnotherKindIsRefused) {
  OperatorHandle op =
      Dispatcher::singleton().find_schema_or_throw("autograd::_record_function", "");
  Stack s{IValue::make_capsule("acme.Other", std::make_shared<int>(1))};
  EXPECT_EQ(error_of([&] { op.call_boxed(&s); }),
            "Expected a Capsule of kind 'opd.autograd.FunctionRecord' but got one of kind "
            "'acme.Other'");
  // A record whose backward is not a FunctionBackward.
  auto record = std::make_shared<autograd::detail::FunctionRecord>();
  record->backward = IValue::make_capsule("acme.Other", std::make_shared<int>(1));
  s = {IValue::make_capsule(std::string(autograd::detail::kFunctionRecordCapsule), record)};
  EXPECT_EQ(error_of([&] { op.call_boxed(&s); }),
            "Expected a Capsule of kind 'opd.autograd.FunctionBackward' but got one of kind "
            "'acme.Other'");
}

}  // namespace
}  // namespace opd
