// Hand-written case generators of the Meta-vs-CPU property test for the normalisation,
// embedding and dropout operators (plugins/cpu/norm_kernels.cpp,
// plugins/composite/embedding_dropout_composites.cpp): their valid calls need related shapes
// (normalized_shape the input's trailing sizes, channels divisible by groups, statistics of C
// elements), indices in range (an index out of range is an error only CPU can see) and the
// bool[3] output_mask, which the default generator cannot draw. Shapes and dtypes are mostly
// valid, now and then not, so that the checks are compared too.

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

ScalarType mostly_floating(Gen& g) { return g.chance(0.9) ? g.float_dtype() : g.dtype(); }

Arg maybe(Gen& g, Arg a) { return g.chance(0.7) ? a : g.none(); }

Arg mask(Gen& g) {
  return g.value(IValue(std::vector<bool>{g.chance(0.7), g.chance(0.6), g.chance(0.6)}));
}

Arg eps(Gen& g) { return g.value(IValue(g.chance(0.8) ? 1e-5 : g.real(0.01, 1.0))); }

// Integer indices in [0, n) (now and then one out of range), of `sizes`.
Arg indices(Gen& g, Shape sizes, int64_t n) {
  TensorRecipe r = g.recipe(std::move(sizes), g.chance(0.8) ? kLong : kInt);
  for (double& v : r.values) v = static_cast<double>(g.integer(0, std::max<int64_t>(n - 1, 0)));
  return g.tensor(r);
}

// A positive tensor (running_var, rstd, invstd): CPU reads it, Meta does not.
Arg positive(Gen& g, Shape sizes, ScalarType dtype) {
  TensorRecipe r = g.recipe(std::move(sizes), dtype);
  for (double& v : r.values) v = g.real(0.5, 2.0);
  return g.tensor(r);
}

// ---- layer_norm ---------------------------------------------------------------------------------

struct LayerNormShapes {
  Shape input, normalized, stats;
};

LayerNormShapes layer_norm_shapes(Gen& g) {
  LayerNormShapes s;
  s.input = g.shape(1, 3);
  const int64_t k = g.integer(1, rank_of(s.input));
  s.normalized.assign(s.input.end() - k, s.input.end());
  s.stats.assign(s.input.begin(), s.input.end() - k);
  s.stats.resize(s.input.size(), 1);
  if (g.chance(0.1)) s.normalized.back() += 1;  // a mismatch: the error text
  return s;
}

Case native_layer_norm_case(Gen& g) {
  const LayerNormShapes s = layer_norm_shapes(g);
  const ScalarType t = mostly_floating(g);
  return Case{{g.tensor(s.input, t), g.int_list(s.normalized), maybe(g, g.tensor(s.normalized, t)),
               maybe(g, g.tensor(s.normalized, t)), eps(g)},
              {}};
}

Case layer_norm_case(Gen& g) {
  Case c = native_layer_norm_case(g);
  c.named["eps"] = c.args.back();
  c.args.pop_back();
  return c;
}

Case native_layer_norm_backward_case(Gen& g) {
  const LayerNormShapes s = layer_norm_shapes(g);
  const ScalarType t = mostly_floating(g);
  return Case{{g.tensor(s.input, t), g.tensor(s.input, t), g.int_list(s.normalized),
               g.tensor(s.stats, t), positive(g, s.stats, t), maybe(g, g.tensor(s.normalized, t)),
               maybe(g, g.tensor(s.normalized, t)), mask(g)},
              {}};
}

// ---- group_norm ---------------------------------------------------------------------------------

struct GroupNormShapes {
  Shape input;
  int64_t N, C, HxW, group;
};

GroupNormShapes group_norm_shapes(Gen& g) {
  GroupNormShapes s;
  s.group = g.integer(1, 3);
  s.N = g.integer(1, 3);
  s.C = s.group * g.integer(1, 2) + (g.chance(0.1) ? 1 : 0);
  s.input = {s.N, s.C};
  const int64_t extra = g.integer(0, 2);
  for (int64_t i = 0; i < extra; ++i) s.input.push_back(g.integer(1, 3));
  s.HxW = 1;
  for (size_t i = 2; i < s.input.size(); ++i) s.HxW *= s.input[i];
  return s;
}

Case native_group_norm_case(Gen& g) {
  const GroupNormShapes s = group_norm_shapes(g);
  const ScalarType t = mostly_floating(g);
  return Case{{g.tensor(s.input, t), maybe(g, g.tensor({s.C}, t)), maybe(g, g.tensor({s.C}, t)),
               g.value(IValue(s.N)), g.value(IValue(s.C)), g.value(IValue(s.HxW)),
               g.value(IValue(s.group)), eps(g)},
              {}};
}

Case group_norm_case(Gen& g) {
  const GroupNormShapes s = group_norm_shapes(g);
  const ScalarType t = mostly_floating(g);
  return Case{{g.tensor(s.input, t), g.value(IValue(s.group)), maybe(g, g.tensor({s.C}, t)),
               maybe(g, g.tensor({s.C}, t)), eps(g)},
              {}};
}

Case native_group_norm_backward_case(Gen& g) {
  const GroupNormShapes s = group_norm_shapes(g);
  const ScalarType t = mostly_floating(g);
  const Shape stats = {s.N, s.group};
  return Case{{g.tensor(s.input, t), g.tensor(s.input, t), g.tensor(stats, t),
               positive(g, stats, t), maybe(g, g.tensor({s.C}, t)), g.value(IValue(s.N)),
               g.value(IValue(s.C)), g.value(IValue(s.HxW)), g.value(IValue(s.group)), mask(g)},
              {}};
}

// ---- batch_norm ---------------------------------------------------------------------------------

Shape batch_norm_input(Gen& g) {
  Shape s = g.shape(2, 4);
  if (s[0] == 0 && g.chance(0.7)) s[0] = 2;
  return s;
}

Case native_batch_norm_case(Gen& g) {
  const Shape in = batch_norm_input(g);
  const int64_t C = in[1] + (g.chance(0.05) ? 1 : 0);
  const ScalarType t = mostly_floating(g);
  const bool training = g.chance(0.6);
  Arg mean = training ? maybe(g, g.tensor({C}, t)) : g.tensor({C}, t);
  Arg var = training ? maybe(g, positive(g, {C}, t)) : positive(g, {C}, t);
  return Case{{g.tensor(in, t), maybe(g, g.tensor({C}, t)), maybe(g, g.tensor({C}, t)), mean, var,
               g.value(IValue(training)), g.value(IValue(0.1)), eps(g)},
              {}};
}

Case native_batch_norm_backward_case(Gen& g) {
  const Shape in = batch_norm_input(g);
  const int64_t C = in[1];
  const ScalarType t = mostly_floating(g);
  const bool train = g.chance(0.6);
  return Case{{g.tensor(in, t), g.tensor(in, t), maybe(g, g.tensor({C}, t)), g.tensor({C}, t),
               positive(g, {C}, t), g.tensor({C}, t), positive(g, {C}, t), g.value(IValue(train)),
               eps(g), mask(g)},
              {}};
}

// ---- embedding ----------------------------------------------------------------------------------

Case embedding_case(Gen& g) {
  const int64_t n = g.integer(1, 4), d = g.integer(0, 3);
  return Case{{g.tensor({n, d}, mostly_floating(g)), indices(g, g.shape(0, 2), n),
               g.value(IValue(g.integer(-1, n - 1)))},
              {}};
}

Case embedding_dense_backward_case(Gen& g) {
  const int64_t n = g.integer(1, 4), d = g.integer(1, 3);
  Shape idx = g.shape(0, 2);
  Shape grad = idx;
  grad.push_back(d);
  return Case{{g.tensor(grad, g.float_dtype()), indices(g, idx, n), g.value(IValue(n)),
               g.value(IValue(g.integer(-1, n - 1))), g.value(IValue(g.chance(0.5)))},
              {}};
}

Case embedding_backward_case(Gen& g) {
  Case c = embedding_dense_backward_case(g);
  c.args.push_back(g.value(IValue(false)));
  return c;
}

// Now and then a table of another rank (the dim check) or an integer one (norm's dtype check).
Case embedding_renorm__case(Gen& g) {
  const int64_t n = g.integer(1, 4), d = g.integer(0, 3);
  Shape table = g.chance(0.9) ? Shape{n, d} : g.shape(1, 3);
  if (table.empty() || table[0] < 1) table = {n};
  // Not an expanded table: writing a row of one is the internal-overlap error, which CPU raises
  // only when the row's norm exceeds max_norm (data Meta cannot see), as PyTorch.
  TensorRecipe self = g.recipe(table, mostly_floating(g));
  if (self.layout == Layout_::Expanded) {
    self.layout = Layout_::Contiguous;
    self.base = self.sizes;
    self.values.resize(static_cast<size_t>(numel_of(self.base)), 1.0);
  }
  return Case{
      {g.tensor(self), indices(g, g.shape(0, 2), table[0]), g.value(IValue(g.real(0.1, 2.0))),
       g.value(IValue(g.chance(0.7) ? 2.0 : g.real(0.5, 3.0)))},
      {}};
}

}  // namespace

void add_norm_op_cases(std::map<std::string, CaseFn>& m) {
  m["native_layer_norm"] = native_layer_norm_case;
  m["layer_norm"] = layer_norm_case;
  m["native_layer_norm_backward"] = native_layer_norm_backward_case;
  m["native_group_norm"] = native_group_norm_case;
  m["group_norm"] = group_norm_case;
  m["native_group_norm_backward"] = native_group_norm_backward_case;
  m["native_batch_norm"] = native_batch_norm_case;
  m["_native_batch_norm_legit"] = [](Gen& g) {  // running statistics required (Tensor(a!))
    const Shape in = batch_norm_input(g);
    const ScalarType t = mostly_floating(g);
    return Case{{g.tensor(in, t), maybe(g, g.tensor({in[1]}, t)), maybe(g, g.tensor({in[1]}, t)),
                 g.tensor({in[1]}, t), positive(g, {in[1]}, t), g.value(IValue(g.chance(0.6))),
                 g.value(IValue(0.1)), eps(g)},
                {}};
  };
  m["batch_norm"] = [](Gen& g) {
    Case c = native_batch_norm_case(g);
    c.args.push_back(g.value(IValue(false)));
    return c;
  };
  m["native_batch_norm.out"] = [](Gen& g) {
    Case c = native_batch_norm_case(g);
    for (const char* name : {"out", "save_mean", "save_invstd"})
      c.named[name] = g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), mostly_floating(g));
    return c;
  };
  m["native_batch_norm_backward"] = native_batch_norm_backward_case;
  m["instance_norm"] = [](Gen& g) {
    Shape in = batch_norm_input(g);
    if (in.size() < 3) in.push_back(g.integer(2, 3));
    const int64_t C = in[1];
    const ScalarType t = g.float_dtype();
    const bool use_input_stats = g.chance(0.7);
    Arg mean = use_input_stats ? maybe(g, g.tensor({C}, t)) : g.tensor({C}, t);
    Arg var = use_input_stats ? maybe(g, positive(g, {C}, t)) : positive(g, {C}, t);
    return Case{
        {g.tensor(in, t), maybe(g, g.tensor({C}, t)), maybe(g, g.tensor({C}, t)), mean, var,
         g.value(IValue(use_input_stats)), g.value(IValue(0.1)), eps(g), g.value(IValue(false))},
        {}};
  };
  m["embedding"] = embedding_case;
  m["embedding_dense_backward"] = embedding_dense_backward_case;
  m["embedding_backward"] = embedding_backward_case;
  m["embedding_renorm_"] = embedding_renorm__case;
}

}  // namespace opd::test::meta_vs_cpu
