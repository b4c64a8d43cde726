// The autograd engine and API: accumulation, retain_graph, create_graph, grad(), no_grad,
// detach, retain_grad, grad_fn names, PyTorch's errors, and graphs over Meta tensors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gradcheck.h"
#include "opd/generator.h"
#include "opd/plugin_manager.h"

namespace opd {
namespace {

using test::leaf;
using ::testing::HasSubstr;

class Autograd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plugins().load_default();
    manual_seed(0);
  }
};

double value(const Tensor& t) { return t.item<double>(); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(Autograd, BackwardAccumulatesIntoLeaves) {
  Tensor x = full({3}, 2.0, TensorOptions().dtype(kDouble)).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{4, 4, 4}));
  (x * 3).sum().backward();  // accumulates
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{7, 7, 7}));
  autograd::set_grad(x, Tensor());
  EXPECT_FALSE(x.grad().defined());
}

TEST_F(Autograd, SharedInputsAndBroadcasting) {
  Tensor a = ones({2, 3}, TensorOptions().dtype(kDouble)).requires_grad_();
  Tensor b = ones({3}, TensorOptions().dtype(kDouble)).requires_grad_();
  (a + b + a).sum().backward();
  EXPECT_EQ(test::detail::flat(a.grad()), std::vector<double>(6, 2.0));
  EXPECT_EQ(test::detail::flat(b.grad()), std::vector<double>(3, 2.0));
  EXPECT_EQ(b.grad().sizes().vec(), std::vector<int64_t>{3});
}

TEST_F(Autograd, FlagsAndNames) {
  Tensor x = ones({2}).requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  Tensor y = x + x;
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(autograd::grad_fn_name(y), "AddBackward0");
  EXPECT_EQ(autograd::grad_fn_name(y.sum()), "SumBackward0");
  EXPECT_EQ(autograd::grad_fn_name(mm(y.view({1, 2}), x.view({2, 1}))), "MmBackward0");
  EXPECT_EQ(autograd::grad_fn_name(x), "");
  Tensor z = ones({2});
  EXPECT_FALSE((z + z).requires_grad());
  EXPECT_FALSE(eq(x, x).requires_grad());  // comparisons are not differentiable
  Tensor f = ones({2}, TensorOptions().requires_grad(true));
  EXPECT_TRUE(f.requires_grad());
}

TEST_F(Autograd, NoGradAndDetach) {
  Tensor x = ones({2}).requires_grad_();
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(x.requires_grad());  // the accessors still work
  }
  EXPECT_TRUE(is_grad_enabled());
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.data_ptr(), x.data_ptr());
  const int64_t before = x._version();
  d.add_(ones({2}));  // shares the version counter
  EXPECT_EQ(x._version(), before + 1);
}

TEST_F(Autograd, RetainGraph) {
  Tensor x = full({2}, 3.0, TensorOptions().dtype(kDouble)).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward(std::nullopt, /*retain_graph=*/true);
  y.backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{12, 12}));
  EXPECT_THAT(error_of([&] { y.backward(); }),
              HasSubstr("Trying to backward through the graph a second time (or directly access "
                        "saved tensors after they have already been freed). Saved intermediate "
                        "values of the graph are freed when you call .backward() or "
                        "autograd.grad(). Specify retain_graph=True if you need to backward "
                        "through the graph a second time or if you need to access saved tensors "
                        "after calling backward."));
}

TEST_F(Autograd, CreateGraphGivesSecondDerivatives) {
  Tensor x = full({1}, 2.0, TensorOptions().dtype(kDouble)).requires_grad_();
  Tensor y = (x * x * x).sum();  // dy/dx = 3x^2 = 12, d2y/dx2 = 6x = 12
  auto g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_DOUBLE_EQ(value(g[0]), 12.0);
  EXPECT_TRUE(g[0].requires_grad());
  auto gg = autograd::grad({g[0].sum()}, {x});
  EXPECT_DOUBLE_EQ(value(gg[0]), 12.0);
  EXPECT_FALSE(x.grad().defined());  // grad() does not accumulate
}

TEST_F(Autograd, GradErrors) {
  Tensor x = ones({2}).requires_grad_();
  Tensor unused = ones({2}).requires_grad_();
  Tensor y = (x * 2).sum();
  EXPECT_THAT(
      error_of([&] { autograd::grad({y}, {unused}, {}, true); }),
      HasSubstr("One of the differentiated Tensors appears to not have been used in the graph"));
  auto g = autograd::grad({y}, {unused}, {}, true, false, /*allow_unused=*/true);
  EXPECT_FALSE(g[0].defined());
  EXPECT_THAT(error_of([&] { (x * 2).backward(); }),
              HasSubstr("grad can be implicitly created only for scalar outputs"));
  EXPECT_THAT(error_of([&] { ones({1}).backward(); }),
              HasSubstr("element 0 of tensors does not require grad and does not have a grad_fn"));
}

TEST_F(Autograd, RetainGradOnNonLeaf) {
  Tensor x = ones({2}).requires_grad_();
  Tensor h = x * 3;
  h.retain_grad();
  EXPECT_TRUE(h.retains_grad());
  (h * h).sum().backward();
  EXPECT_EQ(test::detail::flat(h.grad()), (std::vector<double>{6, 6}));
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{18, 18}));
}

TEST_F(Autograd, InPlaceErrors) {
  Tensor x = ones({3}).requires_grad_();
  EXPECT_THAT(
      error_of([&] { x.add_(1); }),
      HasSubstr("a leaf Variable that requires grad is being used in an in-place operation."));
  EXPECT_THAT(
      error_of([&] { x.slice(0, 0, 1).mul_(2); }),
      HasSubstr(
          "a view of a leaf Variable that requires grad is being used in an in-place operation."));
  Tensor e = exp(x);
  e.add_(1);  // exp saved its result: backward must refuse
  EXPECT_THAT(error_of([&] { e.sum().backward(); }),
              HasSubstr("one of the variables needed for gradient computation has been modified by "
                        "an inplace operation: [torch.FloatTensor [3]], which is output 0 of "
                        "ExpBackward0, is at version 1; expected version 0 instead."));
  NoGradGuard no_grad;
  x.add_(1);  // allowed without recording
}

TEST_F(Autograd, InPlaceRebasesHistory) {
  Tensor x = full({3}, 2.0, TensorOptions().dtype(kDouble)).requires_grad_();
  Tensor y = x * 1.0;
  y.mul_(x);  // y = x^2
  EXPECT_EQ(autograd::grad_fn_name(y), "MulBackward0");
  y.sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{4, 4, 4}));
}

// Note [View history]: views made before an in-place change of their base (or of another view
// of it) take their gradient through the base's new history. Values checked with PyTorch 1.13.
TEST_F(Autograd, ViewsFollowInPlaceChangesOfTheirBase) {
  const auto opts = TensorOptions().dtype(kDouble);
  Tensor x = arange(1, 4, 1, opts).requires_grad_();
  {
    Tensor base = x * 1;
    Tensor v = base.select(0, 0);
    base.mul_(2);
    EXPECT_EQ(autograd::grad_fn_name(v), "AsStridedBackward0");
    v.sum().backward();
    EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{2, 0, 0}));
  }
  autograd::set_grad(x, Tensor());
  {
    Tensor base = x * 1;
    Tensor v1 = base.slice(0, 0, 2), v2 = base.slice(0, 1, 3);
    v1.mul_(3);
    EXPECT_EQ(autograd::grad_fn_name(v2), "AsStridedBackward0");
    (v2 * 1).sum().backward();
    EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{0, 3, 1}));
  }
  // A base that needed no gradient gets one from an in-place operator: so do its views.
  Tensor w = full({1}, 5.0, opts).requires_grad_();
  Tensor b = zeros({3}, opts);
  Tensor v = b.slice(0, 1, 3);
  b.add_(w);
  EXPECT_TRUE(v.requires_grad());
  v.sum().backward();
  EXPECT_EQ(test::detail::flat(w.grad()), (std::vector<double>{2}));
}

// Note [as_strided backward]: elements that share memory, in the result (their gradients add up)
// or in the input (they share their slot's gradient). Values checked with PyTorch 1.13.
TEST_F(Autograd, AsStridedWithOverlappingElements) {
  const auto opts = TensorOptions().dtype(kDouble);
  Tensor x = arange(1, 4, 1, opts).requires_grad_();
  Tensor w = arange(1, 5, 1, opts).view({2, 2});
  (x.as_strided({2, 2}, {1, 1}, 0) * w).sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{1, 5, 4}));
  autograd::set_grad(x, Tensor());
  (x.expand({2, 3}).as_strided({3}, {1}, 0) * arange(1, 4, 1, opts)).sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{1, 2, 3}));
  // An expanded view whose base then changes in place (Note [View history]).
  autograd::set_grad(x, Tensor());
  Tensor base = x * 1;
  Tensor v = base.expand({2, 3});
  base.mul_(2);
  v.sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{4, 4, 4}));
}

// An in-place operator saves self's old value for its formula; with create_graph the gradient
// through that value is itself differentiable. Values checked with PyTorch 1.13.
TEST_F(Autograd, SecondDerivativesThroughAnInPlaceOperatorsSavedSelf) {
  const auto opts = TensorOptions().dtype(kDouble);
  Tensor x = arange(1, 3, 1, opts).requires_grad_();
  Tensor z = arange(3, 5, 1, opts).requires_grad_();
  Tensor y = x * 1;
  y.mul_(z);
  std::vector<Tensor> g = autograd::grad({y.sum()}, {z}, {}, true, true);
  EXPECT_EQ(test::detail::flat(g[0]), (std::vector<double>{1, 2}));
  g[0].sum().backward();
  EXPECT_EQ(test::detail::flat(x.grad()), (std::vector<double>{1, 1}));
}

TEST_F(Autograd, NotImplementedAndOutOverloads) {
  Tensor x = ones({3}).requires_grad_();
  EXPECT_THAT(error_of([&] { (x * 1).resize_({4}); }),
              HasSubstr("derivative for aten::resize_ is not implemented"));
  Tensor out = empty({3});
  EXPECT_THAT(
      error_of([&] { add_out(out, x, x); }),
      HasSubstr("add(): functions with out=... arguments don't support automatic differentiation"));
}

TEST_F(Autograd, MetaGraphs) {
  Tensor w = empty({4, 3}, TensorOptions().device(kMeta)).requires_grad_();
  Tensor x = empty({2, 4}, TensorOptions().device(kMeta));
  Tensor loss = relu(mm(x, w)).sum();
  EXPECT_EQ(autograd::grad_fn_name(loss), "SumBackward0");
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(w.grad().is_meta());
  EXPECT_EQ(w.grad().sizes().vec(), (std::vector<int64_t>{4, 3}));
}

// A graph as long as a training loop that never calls backward makes: freeing it must not
// recurse once per node (PyTorch frees nodes iteratively for this reason). 200,000 nodes
// overflow an 8 MiB stack when each frees the next from its destructor.
TEST_F(Autograd, AVeryLongGraphIsFreedWithoutRecursion) {
  Tensor x = ones({1}, TensorOptions().dtype(kDouble)).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 200000; ++i) y = y * 1.0 + x;  // MulBackward0 saves nothing of y's past
  EXPECT_EQ(autograd::grad_fn_name(y), "AddBackward0");
  y = Tensor();  // frees the whole chain
  Tensor z = x * 2;
  z.sum().backward();
  EXPECT_EQ(value(x.grad().sum()), 2.0);
}

}  // namespace
}  // namespace opd
