// Hand-written case generators of the Meta-vs-CPU property test for the losses of Operators II
// (plugins/composite/nll_loss2d_composites.cpp, loss_composites.cpp,
// loss_pointwise_composites.cpp): nll_loss over K-d inputs needs a target of the input's batch
// and spatial sizes with classes in range (a class out of range is an error only CPU can see),
// and binary_cross_entropy an input in [0, 1] (CPU reads it; Meta cannot). Shapes and dtypes are
// mostly valid, now and then not, so that the checks are compared too.

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

// An input, target and weight of nll_loss over an [N, C, d1, ..., dk] input, `spatial` = k.
struct NdLoss {
  Shape input, target;
  int64_t reduction, ignore_index;
  ScalarType dtype;
  Arg self, target_arg, weight;
};

NdLoss nd_loss(Gen& g, int64_t spatial) {
  NdLoss l;
  const int64_t n = g.integer(0, 3);
  const int64_t classes = g.chance(0.05) ? 0 : g.integer(1, 4);
  l.input = {n, classes};
  l.target = {n};
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t s = g.integer(1, 3);
    l.input.push_back(s);
    l.target.push_back(s);
  }
  if (g.chance(0.05)) l.target.back() += 1;              // a spatial size that does not match
  if (g.chance(0.03)) l.target.erase(l.target.begin());  // a target of the wrong rank
  l.dtype = g.float_dtype();
  l.reduction = g.integer(0, 2);
  l.ignore_index = g.chance(0.8) || classes == 0 ? -100 : g.integer(0, classes - 1);
  l.self = g.tensor(l.input, l.dtype);
  l.target_arg = g.target(l.target, classes, l.ignore_index);
  const int64_t w = g.integer(0, 9);
  l.weight = w < 5   ? g.none()
             : w < 9 ? g.tensor({classes}, l.dtype)
                     : g.tensor({classes + 1}, g.float_dtype());
  return l;
}

std::vector<Arg> loss_args(Gen& g, const NdLoss& l) {
  return {l.self, l.target_arg, l.weight, g.value(IValue(l.reduction)),
          g.value(IValue(l.ignore_index))};
}

CaseFn nd_forward(int64_t min_spatial, int64_t max_spatial) {
  return [=](Gen& g) {
    NdLoss l = nd_loss(g, g.integer(min_spatial, max_spatial));
    return Case{loss_args(g, l), {}};
  };
}

CaseFn nll_loss2d_backward() {
  return [](Gen& g) {
    NdLoss l = nd_loss(g, 2);
    Shape grad = l.reduction == 0 ? l.target : Shape{};
    if (g.chance(0.05)) grad = {2};
    std::vector<Arg> args{g.tensor(grad, l.dtype)};
    for (Arg& a : loss_args(g, l)) args.push_back(a);
    args.push_back(g.tensor({}, l.dtype));
    return Case{args, {}};
  };
}

// An out= form: `names` set to tensors of random shapes (mostly empty) and mostly `dtype`s.
CaseFn with_outs(CaseFn functional, std::vector<const char*> names) {
  return [functional, names](Gen& g) {
    Case c = functional(g);
    for (const char* name : names) {
      c.named[name] = g.tensor(g.chance(0.7) ? Shape{0} : g.shape(),
                               g.chance(0.2) ? g.dtype() : g.float_dtype());
    }
    return c;
  };
}

// Values in [0, 1] of `sizes`: binary_cross_entropy's input and target.
Arg probabilities(Gen& g, Shape sizes, ScalarType dtype) {
  TensorRecipe r = g.recipe(std::move(sizes), dtype);
  for (double& v : r.values) v = static_cast<double>(g.integer(0, 8)) / 8.0;
  return g.tensor(r);
}

Case binary_cross_entropy(Gen& g) {
  auto [a, b] = g.broadcast_pair();
  const ScalarType dt = g.chance(0.9) ? g.float_dtype() : g.dtype();
  Arg weight = g.chance(0.6) ? g.none() : g.tensor(g.chance(0.8) ? a : b, dt);
  return Case{{probabilities(g, a, dt),
               probabilities(g, g.chance(0.8) ? a : b, g.chance(0.9) ? dt : g.float_dtype()),
               weight, g.value(IValue(g.integer(0, 2)))},
              {}};
}

}  // namespace

void add_loss_op_cases(std::map<std::string, CaseFn>& m) {
  m["nll_loss_nd"] = nd_forward(0, 3);
  m["nll_loss2d"] = m["nll_loss2d_forward"] = nd_forward(2, 2);
  m["nll_loss2d.out"] = with_outs(m.at("nll_loss2d"), {"out"});
  m["nll_loss2d_forward.output"] = with_outs(m.at("nll_loss2d"), {"output", "total_weight"});
  m["nll_loss2d_backward"] = nll_loss2d_backward();
  m["nll_loss2d_backward.grad_input"] = with_outs(nll_loss2d_backward(), {"grad_input"});
  m["nll_loss.out"] = with_outs(nd_forward(0, 0), {"out"});
  m["nll_loss_forward.output"] = with_outs(nd_forward(0, 0), {"output", "total_weight"});
  m["nll_loss_backward.grad_input"] = with_outs(
      [](Gen& g) {
        NdLoss l = nd_loss(g, 0);
        Shape grad = l.reduction == 0 ? l.target : Shape{};
        std::vector<Arg> args{g.tensor(grad, l.dtype)};
        for (Arg& a : loss_args(g, l)) args.push_back(a);
        args.push_back(g.tensor({}, l.dtype));
        return Case{args, {}};
      },
      {"grad_input"});
  m["binary_cross_entropy"] = binary_cross_entropy;
  m["binary_cross_entropy.out"] = with_outs(binary_cross_entropy, {"out"});
}

}  // namespace opd::test::meta_vs_cpu
