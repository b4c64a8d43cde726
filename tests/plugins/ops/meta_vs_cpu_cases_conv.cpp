// Hand-written case generators of the Meta-vs-CPU property test for the convolutions of
// Operators II (plugins/cpu/conv_kernels.cpp, plugins/meta/conv_meta.cpp, the fronts in
// plugins/composite/conv_composites.cpp): a weight whose channels fit the input's and groups,
// a kernel no larger than the padded input, output_padding below stride or dilation, and a
// grad_output of the convolution's output size. Shapes, parameters and dtypes are mostly valid,
// now and then not, so that the checks are compared too.

#include <algorithm>

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

struct ConvInputs {
  int64_t spatial = 2, groups = 1;
  bool transposed = false;
  Shape input, weight, output;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  ScalarType dtype = kFloat;
};

ConvInputs conv_inputs(Gen& g, int64_t spatial, bool transposed) {
  ConvInputs c;
  c.spatial = spatial;
  c.transposed = transposed;
  c.groups = g.chance(0.3) ? 2 : 1;
  const int64_t n = g.integer(0, 2);
  const int64_t in_g = g.integer(1, 2), out_g = g.integer(1, 2);
  c.dtype = g.chance(0.9) ? g.pick(std::vector<ScalarType>{kFloat, kDouble}) : g.dtype();
  c.input = {n, (transposed ? out_g : in_g) * c.groups};
  c.weight = transposed ? Shape{out_g * c.groups, in_g} : Shape{out_g * c.groups, in_g};
  c.output = {n, transposed ? in_g * c.groups : out_g * c.groups};
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t k = g.integer(1, 3), s = g.integer(1, 2), dil = g.integer(1, 2);
    const int64_t p = g.integer(0, 1), size = g.integer(1, 5) + (k - 1) * dil;
    const int64_t op = transposed && g.chance(0.3) ? g.integer(0, std::max(s, dil) - 1) : 0;
    c.input.push_back(size);
    c.weight.push_back(k);
    c.stride.push_back(s);
    c.padding.push_back(p);
    c.dilation.push_back(dil);
    c.output_padding.push_back(op);
    const int64_t kernel = (k - 1) * dil + 1;
    // (a transposed one can come out empty or negative: the check's case; no tensor has it)
    c.output.push_back(std::max<int64_t>(
        0, transposed ? (size - 1) * s - 2 * p + kernel + op : (size + 2 * p - kernel) / s + 1));
  }
  if (g.chance(0.05)) c.weight[1] += 1;                // channels that do not match
  if (g.chance(0.03)) c.padding[0] = -1;               // negative padding
  if (g.chance(0.03)) c.weight.back() = 9;             // a kernel larger than the input
  if (g.chance(0.03)) c.input.erase(c.input.begin());  // a rank the weight does not have
  return c;
}

Arg ints(Gen& g, const std::vector<int64_t>& xs) { return g.int_list(xs); }

Arg bias(Gen& g, const ConvInputs& c) {
  if (g.chance(0.4)) return g.none();
  return g.tensor({c.output[1] + (g.chance(0.05) ? 1 : 0)}, g.chance(0.95) ? c.dtype : kDouble);
}

Case convolution_case(Gen& g) {
  const ConvInputs c = conv_inputs(g, g.integer(1, 3), g.chance(0.3));
  return Case{{g.tensor(c.input, c.dtype), g.tensor(c.weight, c.dtype), bias(g, c),
               ints(g, c.stride), ints(g, c.padding), ints(g, c.dilation),
               g.value(IValue(c.transposed)), ints(g, c.output_padding), g.value(IValue(c.groups))},
              {}};
}

}  // namespace

void add_conv_op_cases(std::map<std::string, CaseFn>& m) {
  m["convolution"] = convolution_case;
  m["convolution.out"] = [](Gen& g) {
    Case c = convolution_case(g);
    c.named["out"] = g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), kFloat);
    return c;
  };
  m["convolution_backward"] = [](Gen& g) {
    const ConvInputs c = conv_inputs(g, g.integer(1, 3), g.chance(0.3));
    std::vector<bool> mask{g.chance(0.7), g.chance(0.7), g.chance(0.5)};
    return Case{
        {g.tensor(c.output, c.dtype), g.tensor(c.input, c.dtype), g.tensor(c.weight, c.dtype),
         g.chance(0.5) ? g.none() : ints(g, {c.output[1]}), ints(g, c.stride), ints(g, c.padding),
         ints(g, c.dilation), g.value(IValue(c.transposed)), ints(g, c.output_padding),
         g.value(IValue(c.groups)), g.value(IValue(mask))},
        {}};
  };
  for (int64_t spatial : {1, 2, 3}) {
    const std::string n = std::to_string(spatial);
    m["conv" + n + "d"] = [spatial](Gen& g) {
      ConvInputs c = conv_inputs(g, spatial, false);
      if (g.chance(0.2) && !c.input.empty()) c.input.erase(c.input.begin());  // unbatched
      return Case{
          {g.tensor(c.input, c.dtype), g.tensor(c.weight, c.dtype), bias(g, c), ints(g, c.stride),
           ints(g, c.padding), ints(g, c.dilation), g.value(IValue(c.groups))},
          {}};
    };
    m["conv" + n + "d.padding"] = [spatial](Gen& g) {
      ConvInputs c = conv_inputs(g, spatial, false);
      const std::string padding = g.pick(std::vector<std::string>{"same", "valid", "bad"});
      if (padding == "same" && g.chance(0.8)) c.stride.assign(c.stride.size(), 1);
      return Case{
          {g.tensor(c.input, c.dtype), g.tensor(c.weight, c.dtype), bias(g, c), ints(g, c.stride),
           g.value(IValue(padding)), ints(g, c.dilation), g.value(IValue(c.groups))},
          {}};
    };
  }
  for (int64_t spatial : {1, 2}) {
    m[spatial == 1 ? "conv_transpose1d" : "conv_transpose2d.input"] = [spatial](Gen& g) {
      const ConvInputs c = conv_inputs(g, spatial, true);
      return Case{{g.tensor(c.input, c.dtype), g.tensor(c.weight, c.dtype), bias(g, c),
                   ints(g, c.stride), ints(g, c.padding), ints(g, c.output_padding),
                   g.value(IValue(c.groups)), ints(g, c.dilation)},
                  {}};
    };
  }
}

}  // namespace opd::test::meta_vs_cpu
