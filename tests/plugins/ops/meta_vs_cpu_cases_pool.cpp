// Hand-written case generators of the Meta-vs-CPU property test for the pooling, padding and
// upsampling operators of Operators II (plugins/cpu/pool_*_kernels.cpp, pad_kernels.cpp,
// upsample_kernels.cpp; their Meta kernels in plugins/meta) and two of the small
// operators (one_hot, bilinear in plugins/composite/nn_misc_composites.cpp): a kernel no larger
// than the padded input, padding at most half the kernel, a grad_output of the forward's output
// size and indices the forward made, class values below num_classes, and the related sizes of
// bilinear's four tensors, which the default generator cannot draw. Mostly valid, now and then
// not, so that the checks are compared too.

#include <functional>
#include <utility>

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

ScalarType mostly_floating(Gen& g) { return g.chance(0.9) ? g.float_dtype() : g.dtype(); }

struct PoolArgs {
  Shape input;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
  ScalarType dtype = kFloat;
};

PoolArgs pool_args(Gen& g, bool dilation) {
  PoolArgs p;
  if (g.chance(0.8)) p.input.push_back(g.integer(0, 2));  // batched, now and then empty
  p.input.push_back(g.integer(1, 3));
  p.ceil_mode = g.chance(0.3);
  p.dtype = mostly_floating(g);
  for (int d = 0; d < 2; ++d) {
    const int64_t k = g.integer(1, 3), dil = dilation ? g.integer(1, 2) : 1;
    p.kernel.push_back(k);
    p.stride.push_back(g.integer(1, 2));
    p.padding.push_back(g.integer(0, k / 2));
    p.dilation.push_back(dil);
    p.input.push_back(g.integer(1, 4) + (k - 1) * dil);
  }
  if (g.chance(0.05)) p.padding[0] = p.kernel[0];      // more than half the kernel
  if (g.chance(0.03)) p.kernel[1] = 0;                 // a kernel of size 0
  if (g.chance(0.03)) p.input.back() = 0;              // an empty plane
  if (g.chance(0.03)) p.input.erase(p.input.begin());  // rank 2 or 3 instead of 3 or 4
  return p;
}

Arg ints(Gen& g, const std::vector<int64_t>& xs) { return g.int_list(xs); }

// The forward's outputs on the case's device (grad_output and indices of the backward), or a
// 0-dim tensor when the forward raises (the backward's own checks then show that error).
Arg forward_result(Gen& g, Arg self, const PoolArgs& p, bool indices) {
  return g.derived(
      {std::move(self)},
      [p, indices](const std::vector<IValue>& v) {
        const Tensor& x = v[0].to_tensor();
        try {
          auto [out, idx] = opd::max_pool2d_with_indices(x, p.kernel, p.stride, p.padding,
                                                         p.dilation, p.ceil_mode);
          return IValue(indices ? idx : opd::ones_like(out));
        } catch (const Error&) {
          return IValue(opd::zeros(
              {}, TensorOptions().dtype(indices ? kLong : x.scalar_type()).device(x.device())));
        }
      },
      indices ? "indices of max_pool2d_with_indices(self)" : "ones of the output's shape");
}

Case max_pool2d_with_indices_case(Gen& g) {
  const PoolArgs p = pool_args(g, true);
  return Case{{g.tensor(p.input, p.dtype), ints(g, p.kernel),
               g.chance(0.2) ? ints(g, {}) : ints(g, p.stride), ints(g, p.padding),
               ints(g, p.dilation), g.value(IValue(p.ceil_mode))},
              {}};
}

Case max_pool2d_with_indices_backward_case(Gen& g) {
  const PoolArgs p = pool_args(g, true);
  Arg self = g.shared(g.tensor(p.input, p.dtype));
  return Case{{forward_result(g, self, p, false), self, ints(g, p.kernel), ints(g, p.stride),
               ints(g, p.padding), ints(g, p.dilation), g.value(IValue(p.ceil_mode)),
               forward_result(g, self, p, true)},
              {}};
}

Case avg_pool2d_case(Gen& g) {
  const PoolArgs p = pool_args(g, false);
  Case c{{g.tensor(p.input, p.dtype), ints(g, p.kernel), ints(g, p.stride), ints(g, p.padding),
          g.value(IValue(p.ceil_mode)), g.value(IValue(g.chance(0.5)))},
         {}};
  c.args.push_back(g.chance(0.8) ? g.none() : g.value(IValue(g.integer(0, 3))));
  return c;
}

Case avg_pool2d_backward_case(Gen& g) {
  const PoolArgs p = pool_args(g, false);
  Arg self = g.shared(g.tensor(p.input, p.dtype));
  const bool count_include_pad = g.chance(0.5);
  Arg divisor = g.chance(0.8) ? g.none() : g.value(IValue(g.integer(0, 3)));
  Arg grad = g.derived(
      {self},
      [p, count_include_pad](const std::vector<IValue>& v) {
        const Tensor& x = v[0].to_tensor();
        try {
          return IValue(opd::ones_like(
              opd::avg_pool2d(x, p.kernel, p.stride, p.padding, p.ceil_mode, count_include_pad)));
        } catch (const Error&) {
          return IValue(opd::zeros({}, TensorOptions().dtype(x.scalar_type()).device(x.device())));
        }
      },
      "ones of avg_pool2d(self)'s shape");
  return Case{{grad, self, ints(g, p.kernel), ints(g, p.stride), ints(g, p.padding),
               g.value(IValue(p.ceil_mode)), g.value(IValue(count_include_pad)), divisor},
              {}};
}

// Class values in [0, classes) and num_classes -1 or at least `classes` (a value at or past
// num_classes, or a negative one, is an error only CPU can see: one_hot is tagged
// dynamic_output_shape, and with -1 Meta must refuse).
Case one_hot_case(Gen& g) {
  const int64_t classes = g.integer(1, 4);
  TensorRecipe r = g.recipe(g.shape(0, 2), g.chance(0.9) ? kLong : g.dtype());
  for (double& v : r.values) v = static_cast<double>(g.integer(0, classes - 1));
  const int64_t num_classes = g.chance(0.3) ? -1 : classes + g.integer(0, 2);
  return Case{{g.tensor(r), g.value(IValue(num_classes))}, {}};
}

Case bilinear_case(Gen& g) {
  const Shape batch = g.shape(0, 2);
  const int64_t in1 = g.integer(1, 3), in2 = g.integer(1, 3), out = g.integer(1, 3);
  const ScalarType t = g.chance(0.9) ? g.pick(std::vector<ScalarType>{kFloat, kDouble}) : g.dtype();
  Shape x1 = batch, x2 = batch;
  x1.push_back(in1);
  x2.push_back(in2 + (g.chance(0.05) ? 1 : 0));  // a weight that does not fit input2
  Arg bias = g.chance(0.4) ? g.none() : g.tensor({out}, t);
  return Case{{g.tensor(x1, t), g.tensor(x2, t), g.tensor({out, in1, in2}, t), bias}, {}};
}

// ---- padding and upsampling ---------------------------------------------------------------------

// A tensor of `spatial` planes' worth of trailing sizes, batched or not, and pads (left, right,
// then top, bottom) that fit them: reflection needs each pad below its size.
struct PadArgs {
  Shape input;
  std::vector<int64_t> pad;
  ScalarType dtype = kFloat;
};

PadArgs pad_args(Gen& g, int spatial, bool reflect) {
  PadArgs p;
  p.dtype = mostly_floating(g);
  if (g.chance(0.7)) p.input.push_back(g.integer(0, 2));
  p.input.push_back(g.integer(1, 3));
  for (int d = 0; d < spatial; ++d) p.input.push_back(g.integer(1, 5));
  for (int d = 0; d < spatial; ++d) {
    const int64_t size = p.input[p.input.size() - 1 - d];
    for (int side = 0; side < 2; ++side) {
      p.pad.push_back(g.chance(0.1) ? -g.integer(0, size - 1)
                                    : g.integer(0, reflect ? size - 1 : 3));
    }
  }
  if (g.chance(0.05)) p.pad[0] = p.input.back() + 1;   // larger than reflection allows
  if (g.chance(0.03)) p.input.erase(p.input.begin());  // a rank the operator does not take
  return p;
}

// ones of `forward`'s result on the case's device (a backward's grad_output), or a 0-dim tensor
// when the forward raises (the backward's own checks then show that error).
Arg ones_of(Gen& g, Arg self, std::function<Tensor(const Tensor&)> forward, std::string text) {
  return g.derived(
      {std::move(self)},
      [forward](const std::vector<IValue>& v) {
        const Tensor& x = v[0].to_tensor();
        try {
          return IValue(opd::ones_like(forward(x)));
        } catch (const Error&) {
          return IValue(opd::zeros({}, TensorOptions().dtype(x.scalar_type()).device(x.device())));
        }
      },
      std::move(text));
}

CaseFn pad_case(int spatial, bool reflect) {
  return [=](Gen& g) {
    const PadArgs p = pad_args(g, spatial, reflect);
    return Case{{g.tensor(p.input, p.dtype), ints(g, p.pad)}, {}};
  };
}

CaseFn pad_backward_case(int spatial, bool reflect) {
  return [=](Gen& g) {
    const PadArgs p = pad_args(g, spatial, reflect);
    Arg self = g.shared(g.tensor(p.input, p.dtype));
    const std::vector<int64_t> pad = p.pad;
    auto forward = [spatial, reflect, pad](const Tensor& x) {
      if (spatial == 1)
        return reflect ? opd::reflection_pad1d(x, pad) : opd::replication_pad1d(x, pad);
      return reflect ? opd::reflection_pad2d(x, pad) : opd::replication_pad2d(x, pad);
    };
    return Case{{ones_of(g, self, forward, "ones of the padded self"), self, ints(g, pad)}, {}};
  };
}

struct UpsampleArgs {
  Shape input;
  std::vector<int64_t> output;
  ScalarType dtype = kFloat;
};

UpsampleArgs upsample_args(Gen& g) {
  UpsampleArgs u;
  u.dtype = mostly_floating(g);
  u.input = {g.integer(0, 2), g.integer(1, 3), g.integer(1, 4), g.integer(1, 4)};
  u.output = {g.integer(1, 6), g.integer(1, 6)};
  if (g.chance(0.05)) u.output[1] = 0;                 // an empty output size
  if (g.chance(0.03)) u.input.erase(u.input.begin());  // rank 3
  return u;
}

Arg scale(Gen& g) { return g.chance(0.7) ? g.none() : g.value(IValue(g.real(0.5, 3.0))); }

CaseFn upsample_case(bool bilinear) {
  return [=](Gen& g) {
    const UpsampleArgs u = upsample_args(g);
    Case c{{g.tensor(u.input, u.dtype), ints(g, u.output)}, {}};
    if (bilinear) c.args.push_back(g.value(IValue(g.chance(0.5))));
    c.args.push_back(scale(g));
    c.args.push_back(scale(g));
    return c;
  };
}

CaseFn upsample_backward_case(bool bilinear) {
  return [=](Gen& g) {
    const UpsampleArgs u = upsample_args(g);
    Shape grad = u.input;
    if (grad.size() == 4) {
      grad[2] = u.output[0];
      grad[3] = u.output[1];
    }
    if (g.chance(0.05)) grad.back() += 1;  // a grad_output of another size
    Case c{{g.tensor(grad, u.dtype), ints(g, u.output), ints(g, u.input)}, {}};
    if (bilinear) c.args.push_back(g.value(IValue(g.chance(0.5))));
    c.args.push_back(scale(g));
    c.args.push_back(scale(g));
    return c;
  };
}

}  // namespace

void add_pool_op_cases(std::map<std::string, CaseFn>& m) {
  m["max_pool2d_with_indices"] = max_pool2d_with_indices_case;
  m["max_pool2d"] = max_pool2d_with_indices_case;
  m["max_pool2d_with_indices_backward"] = max_pool2d_with_indices_backward_case;
  m["avg_pool2d"] = avg_pool2d_case;
  m["avg_pool2d_backward"] = avg_pool2d_backward_case;
  m["reflection_pad1d"] = pad_case(1, true);
  m["reflection_pad2d"] = pad_case(2, true);
  m["replication_pad1d"] = pad_case(1, false);
  m["replication_pad2d"] = pad_case(2, false);
  m["reflection_pad1d_backward"] = pad_backward_case(1, true);
  m["reflection_pad2d_backward"] = pad_backward_case(2, true);
  m["replication_pad1d_backward"] = pad_backward_case(1, false);
  m["replication_pad2d_backward"] = pad_backward_case(2, false);
  m["upsample_nearest2d"] = upsample_case(false);
  m["upsample_bilinear2d"] = upsample_case(true);
  m["upsample_nearest2d_backward"] = upsample_backward_case(false);
  m["upsample_bilinear2d_backward"] = upsample_backward_case(true);
  m["one_hot"] = one_hot_case;
  m["bilinear"] = bilinear_case;
}

}  // namespace opd::test::meta_vs_cpu
