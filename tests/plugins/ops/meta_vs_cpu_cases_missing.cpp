// Hand-written case generators of the Meta-vs-CPU property test for the operators of the
// "missing ops" helper (issue 31, session 3) whose valid calls depend on values only CPU reads:
// masked_scatter (a source with enough elements for the mask's ones), index_copy (indices in
// range) and cross / linalg_cross (a dimension of size 3 in both inputs, which the default
// generator seldom draws for the out= forms). The invalid calls are of shape, rank and dtype.

#include <algorithm>
#include <numeric>

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

// The out= form of a generator: an out tensor, mostly empty (resized), mostly of `dtype`.
CaseFn with_out(CaseFn functional, ScalarType dtype) {
  return [functional, dtype](Gen& g) {
    Case c = functional(g);
    c.named["out"] =
        g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), g.chance(0.8) ? dtype : g.dtype());
    return c;
  };
}

Case masked_scatter_case(Gen& g) {
  const Shape s = g.shape();
  const Shape mask = g.chance(0.9) ? g.broadcastable_to(s) : g.shape();
  const ScalarType dt = g.dtype();
  // At least one element of source per element of the broadcast result: never too few ones.
  const Shape source = {numel_of(s) * std::max<int64_t>(1, numel_of(mask)) + g.integer(0, 2)};
  return Case{{g.tensor(s, dt), g.tensor(mask, g.chance(0.9) ? kBool : g.dtype()),
               g.tensor(source, g.chance(0.9) ? dt : g.dtype())},
              {}};
}

Case index_copy_case(Gen& g) {
  const Shape s = g.shape();
  const ScalarType dt = g.dtype();
  const int64_t rank = std::max<int64_t>(static_cast<int64_t>(s.size()), 1);
  const int64_t d = g.integer(-rank, rank - 1), dd = d < 0 ? d + rank : d;
  const int64_t size = s.empty() ? 1 : s[static_cast<size_t>(dd)];
  const int64_t n = s.empty() ? 1 : g.integer(0, size);
  Shape source = s;
  if (!source.empty()) source[static_cast<size_t>(dd)] = n;
  if (g.chance(0.05)) source.push_back(2);
  TensorRecipe index =
      g.recipe(s.empty() && g.chance(0.5) ? Shape{} : Shape{n}, g.chance(0.05) ? kInt : kLong);
  for (double& v : index.values)
    v = static_cast<double>(g.integer(0, std::max<int64_t>(size - 1, 0)));
  return Case{{g.tensor(s, dt), g.value(IValue(d)), g.tensor(index),
               g.tensor(source, g.chance(0.9) ? dt : g.dtype())},
              {}};
}

// self and other of one rank with size 3 at `dim` (mostly), broadcast in the other dimensions.
CaseFn cross_case(bool linalg) {
  return [linalg](Gen& g) {
    Shape s = g.shape(1, 3);
    const int64_t rank = static_cast<int64_t>(s.size());
    const int64_t d = g.integer(0, rank - 1);
    if (g.chance(0.95)) s[static_cast<size_t>(d)] = 3;
    Shape o = s;
    for (int64_t i = 0; i < rank; ++i) {
      if (i == d) continue;
      if (g.chance(0.25))
        o[static_cast<size_t>(i)] = 1;
      else if (g.chance(0.25))
        s[static_cast<size_t>(i)] = 1;
    }
    const ScalarType dt = g.dtype();
    const Arg dim = g.value(IValue(g.chance(0.5) ? d : d - rank));
    Case c{{g.tensor(s, dt), g.tensor(o, g.chance(0.9) ? dt : g.dtype())}, {}};
    if (linalg) {
      c.named["dim"] = dim;
    } else {
      c.args.push_back(g.chance(0.3) ? g.none() : dim);
    }
    return c;
  };
}

}  // namespace

void add_missing_op_cases(std::map<std::string, CaseFn>& m) {
  m["masked_scatter"] = m["masked_scatter_"] = masked_scatter_case;
  m["index_copy"] = m["index_copy_"] = index_copy_case;
  m["index_copy.out"] = with_out(index_copy_case, kFloat);
  m["linalg_cross"] = cross_case(true);
  m["linalg_cross.out"] = with_out(cross_case(true), kFloat);
  m["cross"] = cross_case(false);
  m["cross.out"] = with_out(cross_case(false), kFloat);
}

}  // namespace opd::test::meta_vs_cpu
