// Hand-written case generators of the Meta-vs-CPU property test for the random operators whose
// valid calls depend on values only CPU reads (plugins/cpu/random_kernels.cpp): bernoulli's
// probabilities in [0, 1], normal's standard deviations >= 0, multinomial's positive weights. The
// invalid calls are of shape and dtype; the other random operators take the default generator
// (their checks are of arguments, which Meta makes too).

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

// A tensor of `sizes` whose values lie in [lo, hi].
Arg tensor_within(Gen& g, std::vector<int64_t> sizes, ScalarType dtype, double lo, double hi) {
  TensorRecipe r = g.recipe(std::move(sizes), dtype);
  for (double& v : r.values) v = g.real(lo, hi);
  return g.tensor(r);
}

// Mostly a floating dtype (what these operators take), now and then another.
ScalarType mostly_floating(Gen& g) { return g.chance(0.85) ? g.float_dtype() : g.dtype(); }

CaseFn with_out(CaseFn functional) {
  return [functional](Gen& g) {
    Case c = functional(g);
    c.named["out"] = g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), mostly_floating(g));
    return c;
  };
}

Case probabilities(Gen& g) {
  return Case{{tensor_within(g, g.shape(), mostly_floating(g), 0, 1)}, {}};
}

Case bernoulli_tensor(Gen& g) {
  const Shape s = g.shape();
  return Case{
      {g.tensor(s, g.dtype()), tensor_within(g, g.chance(0.9) ? g.broadcastable_to(s) : g.shape(),
                                             mostly_floating(g), 0, 1)},
      {}};
}

Case normal_float_tensor(Gen& g) {
  return Case{{g.value(g.real(-2, 2)), tensor_within(g, g.shape(), mostly_floating(g), 0, 3)}, {}};
}

Case normal_tensor_tensor(Gen& g) {
  const auto [a, b] = g.broadcast_pair();
  return Case{{g.tensor(a, mostly_floating(g)), tensor_within(g, b, mostly_floating(g), 0, 3)}, {}};
}

// Probabilities of 1 or 2 dims (now and then 0 or 3), positive; any number of samples around
// the number of categories, with or without replacement.
Case multinomial_case(Gen& g) {
  const int rank = g.chance(0.9) ? static_cast<int>(g.integer(1, 2)) : (g.chance(0.5) ? 0 : 3);
  const Shape s = g.shape(rank, rank);
  const int64_t categories = s.empty() ? 1 : s.back();
  return Case{{tensor_within(g, s, mostly_floating(g), 0.1, 1.0),
               g.value(g.integer(-1, categories + 1)), g.value(g.chance(0.5))},
              {}};
}

}  // namespace

void add_random_op_cases(std::map<std::string, CaseFn>& m) {
  m["bernoulli"] = probabilities;
  m["bernoulli.out"] = with_out(probabilities);
  m["bernoulli_.Tensor"] = bernoulli_tensor;
  m["normal.float_Tensor"] = normal_float_tensor;
  m["normal.float_Tensor_out"] = with_out(normal_float_tensor);
  m["normal.Tensor_Tensor"] = normal_tensor_tensor;
  m["normal.Tensor_Tensor_out"] = with_out(normal_tensor_tensor);
  m["multinomial"] = multinomial_case;
  m["multinomial.out"] = [](Gen& g) {
    Case c = multinomial_case(g);
    c.named["out"] =
        g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), g.chance(0.8) ? kLong : g.dtype());
    return c;
  };
}

}  // namespace opd::test::meta_vs_cpu
