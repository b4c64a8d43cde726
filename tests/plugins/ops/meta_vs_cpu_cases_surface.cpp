// Hand-written case generators of the Meta-vs-CPU property test for repeat_interleave.Tensor and
// repeat_interleave.self_Tensor (helper "surface", issue 31 session 4): the result's length is
// the sum of the counts, data only CPU reads, so both are tagged dynamic_output_shape and Meta
// must refuse. The default generator would pass output_size, with which Meta (as PyTorch 1.13's)
// returns a tensor of that length without reading the counts: these leave it out. The counts
// are mostly valid (non-negative, Long or Int, of the length self needs) so that CPU returns.

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

// Counts in [0, 3] (now and then a negative one), mostly Long or Int, now and then another dtype.
Arg counts(Gen& g, std::vector<int64_t> sizes) {
  const ScalarType dtype = g.chance(0.9) ? (g.chance(0.5) ? kLong : kInt) : g.dtype();
  TensorRecipe r = g.recipe(std::move(sizes), dtype);
  for (double& v : r.values) v = static_cast<double>(g.integer(g.chance(0.05) ? -1 : 0, 3));
  return g.tensor(r);
}

Case repeat_interleave_counts(Gen& g) {
  return Case{{counts(g, g.chance(0.9) ? g.shape(1, 1) : g.shape())}, {}};
}

// self with a dim (or None: flattened), and counts of the length along it, or of one element.
Case repeat_interleave_self(Gen& g) {
  const Shape s = g.shape(1, 3);
  const int64_t rank = static_cast<int64_t>(s.size());
  const bool flatten = g.chance(0.3);
  const int64_t d = g.integer(0, rank - 1);
  const int64_t n = flatten ? numel_of(s) : s[static_cast<size_t>(d)];
  Shape count_sizes = g.chance(0.2) ? Shape{1} : Shape{g.chance(0.9) ? n : n + 1};
  if (g.chance(0.05)) count_sizes = {};
  Case c{{g.tensor(s, g.dtype()), counts(g, count_sizes)}, {}};
  c.named["dim"] = flatten ? g.none() : g.value(g.chance(0.5) ? d : d - rank);
  return c;
}

}  // namespace

void add_surface_op_cases(std::map<std::string, CaseFn>& m) {
  m["repeat_interleave.Tensor"] = repeat_interleave_counts;
  m["repeat_interleave.self_Tensor"] = repeat_interleave_self;
}

}  // namespace opd::test::meta_vs_cpu
