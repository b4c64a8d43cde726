// The random fills and Generator objects through the typed and the boxed API
// (plugins/cpu/random_kernels.cpp, plugins/meta/random_meta.cpp, Note [Generator objects] in
// opd/generator.h): reproducibility, a generator's independence of the default one, the default
// one's values (uniform_(0, 1) is rand), the boxed form of a Generator, ranges, and PyTorch
// 1.13's messages on CPU and Meta. Distributions are tested from Python (test_random.py).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "error_text.h"
#include "op_test_util.h"
#include "opd/dispatcher.h"
#include "opd/generator.h"
#include "opd/ivalue.h"
#include "opd/ops.h"

namespace opd {
namespace {

using test::values;
using test_util::error_text;

class RandomOps : public ::testing::Test {
 protected:
  void SetUp() override { test::load_default_plugins(); }
};

TEST_F(RandomOps, AGeneratorReplaysItsSeedWhateverTheDefaultOneDraws) {
  Generator g;
  g.manual_seed(1);
  const std::vector<double> a = values(rand({64}, g));
  g.manual_seed(1);
  manual_seed(5);
  rand({100});  // the default generator moves, g does not
  EXPECT_EQ(values(rand({64}, g)), a);
  EXPECT_EQ(g.initial_seed(), 1u);
  EXPECT_EQ(g.offset(), 64u);  // one draw of 64 elements since the seed, a Philox block each

  // A copy shares the state (torch's Generator objects are references).
  Generator same = g;
  same.manual_seed(1);
  EXPECT_EQ(values(rand({64}, g)), a);

  // And g's draws leave the default generator alone.
  manual_seed(5);
  const std::vector<double> x = values(rand({8}));
  manual_seed(5);
  rand({1000}, g);
  EXPECT_EQ(values(rand({8})), x);
}

TEST_F(RandomOps, NoGeneratorIsTheDefaultOneAndUniformZeroOneIsRand) {
  for (ScalarType t : {kFloat, kDouble, kHalf, kBFloat16}) {
    manual_seed(9);
    const std::vector<double> r = values(rand({33}, TensorOptions().dtype(t)));
    manual_seed(9);
    Tensor u = empty({33}, TensorOptions().dtype(t));
    u.uniform_(0, 1, std::nullopt);
    EXPECT_EQ(values(u), r) << t;
    manual_seed(9);
    EXPECT_EQ(values(rand({33}, std::optional<Generator>(), TensorOptions().dtype(t))), r) << t;
    manual_seed(9);
    const std::vector<double> n = values(randn({33}, TensorOptions().dtype(t)));
    manual_seed(9);
    Tensor v = empty({33}, TensorOptions().dtype(t));
    v.normal_(0, 1, std::nullopt);
    EXPECT_EQ(values(v), n) << t;
  }
  EXPECT_EQ(default_generator().initial_seed(), 9u);
}

TEST_F(RandomOps, ABoxedGeneratorIsACapsuleOfKindGenerator) {
  Generator g;
  g.manual_seed(3);
  IValue v(g);
  EXPECT_TRUE(v.is_capsule());
  EXPECT_TRUE(v.is_generator());
  EXPECT_EQ(v.capsule_kind(), "Generator");
  EXPECT_TRUE(v.to_generator() == g);
  EXPECT_TRUE(IValue(std::optional<Generator>()).is_none());
  EXPECT_FALSE(IValue(int64_t{1}).is_generator());

  std::optional<OperatorHandle> op = Dispatcher::singleton().find_schema({"aten::uniform_", ""});
  ASSERT_TRUE(op.has_value());
  Tensor boxed = empty({10});
  Stack stack{IValue(boxed), IValue(-1.0), IValue(1.0), IValue(g)};
  op->call_boxed(&stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_TRUE(stack[0].to_tensor().is_same(boxed));
  g.manual_seed(3);
  Tensor typed = empty({10});
  typed.uniform_(-1, 1, g);
  EXPECT_EQ(values(boxed), values(typed));

  // Another value where a Generator? goes is refused before any kernel runs.
  Stack wrong{IValue(boxed), IValue(0.0), IValue(1.0), IValue(int64_t{1})};
  EXPECT_THROW(op->call_boxed(&wrong), Error);
}

TEST_F(RandomOps, RandomRangesAndCounts) {
  Generator g;
  g.manual_seed(4);
  Tensor x = empty({5000}, TensorOptions().dtype(kLong));
  x.random_(-3, 4, g);
  std::vector<int> seen(7);
  for (double v : values(x)) {
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    ++seen[static_cast<size_t>(v + 3)];
  }
  for (int count : seen) EXPECT_GT(count, 500);

  Tensor b = empty({5000}, TensorOptions().dtype(kByte));
  b.random_(g);
  double hi = 0;
  for (double v : values(b)) hi = std::max(hi, v);
  EXPECT_EQ(hi, 255);

  Tensor c = empty({1000}, TensorOptions().dtype(kInt));
  c.bernoulli_(1.0, g);
  for (double v : values(c)) ASSERT_EQ(v, 1);
  c.geometric_(0.5, g);
  for (double v : values(c)) ASSERT_GE(v, 1);
}

TEST_F(RandomOps, ErrorsAsPyTorchOnCpuAndMeta) {
  for (Device d : {Device(DeviceType::CPU), Device(DeviceType::Meta)}) {
    Tensor x = empty({3}, TensorOptions().device(d));
    EXPECT_EQ(error_text<Error>([&] { x.uniform_(2, 1); }),
              "uniform_ expects to return a [from, to) range, but found from=2 > to=1");
    EXPECT_EQ(error_text<Error>([&] { x.normal_(0, -1); }),
              "normal expects std >= 0.0, but found std -1");
    EXPECT_EQ(error_text<Error>([&] { x.bernoulli_(1.5); }),
              "bernoulli_ expects p to be in [0, 1], but got p=1.5");
    EXPECT_EQ(error_text<Error>([&] { x.random_(3, 2); }),
              "random_ expects 'from' to be less than 'to', but got from=3 >= to=2");
    EXPECT_EQ(error_text<Error>([&] { x.exponential_(-1); }),
              "exponential_ expects lambda >= 0.0, but found lambda=-1");
    EXPECT_EQ(error_text<Error>([&] { x.geometric_(0); }),
              "geometric_ expects p to be in (0, 1), but got p=0");
    EXPECT_EQ(error_text<Error>([&] { x.log_normal_(0, 0); }),
              "log_normal_ expects std > 0.0, but found std=0");
    Tensor i = empty({3}, TensorOptions().dtype(kChar).device(d));
    EXPECT_EQ(error_text<Error>([&] { i.random_(-200, 2); }),
              "from is out of bounds for signed char");
    EXPECT_EQ(error_text<Error>([&] { i.uniform_(); }),
              "\"check_uniform_bounds\" not implemented for 'Char'");
    Tensor h = empty({3}, TensorOptions().dtype(kHalf).device(d));
    EXPECT_EQ(error_text<Error>([&] { h.bernoulli_(0.5); }),
              "\"bernoulli_scalar_cpu_\" not implemented for 'Half'");
    EXPECT_TRUE(x.uniform_().is_same(x));
  }
}

}  // namespace
}  // namespace opd
