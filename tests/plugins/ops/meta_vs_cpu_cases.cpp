// The case generators of the Meta-vs-CPU property test: one per operator of
// manifests/native_functions.yaml, keyed by its YAML name. Each draws arguments that mostly make
// a valid call and now and then an invalid one (wrong rank, dtype, dim...), so that both the
// metadata of results and the errors get compared. Values that only CPU can check (class
// indices of a target) are always drawn valid.

#include <algorithm>
#include <numeric>

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

// The broadcast of two shapes, or the larger one when they do not broadcast.
Shape broadcast_shape(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

// A size list for view/reshape of a tensor with `numel` elements: a factorisation in random
// order, with size-1 dims, sometimes a -1, and now and then a wrong element count.
Shape reshape_target(Gen& g, int64_t numel) {
  Shape s;
  if (numel == 0) {
    s = g.shape(1, 3);
    s[static_cast<size_t>(g.integer(0, rank_of(s) - 1))] = 0;
  } else {
    for (int64_t rest = numel; rest > 1;) {
      Shape divisors;
      for (int64_t d = 2; d <= rest; ++d) {
        if (rest % d == 0) divisors.push_back(d);
      }
      int64_t d = g.pick(divisors);
      s.push_back(d);
      rest /= d;
    }
    for (int64_t i = g.integer(0, 2); i > 0; --i) s.push_back(1);
    for (size_t i = s.size(); i > 1; --i)
      std::swap(s[i - 1], s[static_cast<size_t>(g.integer(0, static_cast<int64_t>(i) - 1))]);
  }
  if (!s.empty() && g.chance(0.2)) s[static_cast<size_t>(g.integer(0, rank_of(s) - 1))] = -1;
  if (g.chance(0.05)) s.push_back(2);
  return s;
}

// A size list for a factory: mostly a shape, now and then with a negative size.
Arg sizes_arg(Gen& g) {
  Shape s = g.shape(0, 4);
  if (!s.empty() && g.chance(0.04)) s[0] = -1;
  return g.int_list(s);
}

Arg alpha(Gen& g) { return g.chance(0.6) ? g.value(IValue(int64_t{1})) : g.scalar(); }
Arg maybe(Gen& g, Arg a, double p_none = 0.4) { return g.chance(p_none) ? g.none() : std::move(a); }

// The out= form of an operator whose functional form's cases `functional` draws: the same
// arguments and an out tensor (`name`), mostly empty (resized), now and then of another shape,
// of the result's dtype or another.
CaseFn with_out(CaseFn functional, const char* name, std::vector<ScalarType> dtypes) {
  return [functional, name, dtypes](Gen& g) {
    Case c = functional(g);
    c.named[name] =
        g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), g.chance(0.3) ? g.dtype() : g.pick(dtypes));
    return c;
  };
}

// Two tensors whose shapes broadcast (mostly), of random dtypes.
std::pair<Arg, Arg> tensor_pair(Gen& g, bool floating = false) {
  auto [a, b] = g.broadcast_pair();
  auto dt = [&] { return floating ? g.float_dtype() : g.dtype(); };
  return {g.tensor(a, dt()), g.tensor(b, dt())};
}

// The arguments shared by nll_loss_forward, nll_loss and cross_entropy_loss; the ones for
// nll_loss_backward add grad_output and total_weight around them.
struct LossInputs {
  Shape input, target;
  int64_t classes, reduction, ignore_index;
  ScalarType dtype;
  Arg self, target_arg, weight;
};
LossInputs loss_inputs(Gen& g, bool probabilities_allowed) {
  LossInputs l;
  int64_t n = g.integer(0, 4);
  l.classes = g.chance(0.05) ? 0 : g.integer(1, 5);
  int64_t kind = g.integer(0, 19);
  l.input = kind < 17 ? Shape{n, l.classes} : kind < 19 ? Shape{l.classes} : Shape{n, l.classes, 2};
  l.target = kind < 17 ? Shape{n} : kind < 19 ? Shape{} : Shape{n, 2};
  if (g.chance(0.05)) l.target = {n + 1};
  l.dtype = g.float_dtype();
  l.reduction = g.integer(0, 2);
  l.ignore_index = g.chance(0.8) || l.classes == 0 ? -100 : g.integer(0, l.classes - 1);
  l.self = g.tensor(l.input, l.dtype);
  l.target_arg = probabilities_allowed && g.chance(0.2)
                     ? g.tensor(l.input, g.chance(0.8) ? l.dtype : g.dtype())
                     : g.target(l.target, l.classes, l.ignore_index);
  int64_t w = g.integer(0, 9);
  l.weight = w < 5   ? g.none()
             : w < 9 ? g.tensor({l.classes}, l.dtype)
                     : g.tensor({l.classes + 1}, g.float_dtype());
  return l;
}

void add_factories(std::map<std::string, CaseFn>& m) {
  m["empty.memory_format"] = [](Gen& g) {
    Case c{{sizes_arg(g)}, {}};
    g.factory_options(c);
    c.named["memory_format"] = g.memory_format(true);
    return c;
  };
  m["empty_strided"] = [](Gen& g) {
    Shape size = g.shape(0, 3), stride(size.size());
    for (int64_t& s : stride) s = g.integer(0, 4);
    if (g.chance(0.05)) stride.push_back(1);
    Case c{{g.int_list(size), g.int_list(stride)}, {}};
    g.factory_options(c);
    return c;
  };
  for (const char* name : {"zeros", "ones", "rand", "randn"}) {
    m[name] = [](Gen& g) {
      Case c{{sizes_arg(g)}, {}};
      g.factory_options(c);
      return c;
    };
  }
  m["full"] = [](Gen& g) {
    Case c{{sizes_arg(g), g.scalar()}, {}};
    g.factory_options(c);
    return c;
  };
  // CPU converts the computed points to dtype and refuses one that overflows it (a negative
  // point for uint8), which Meta, without values, cannot see (nor can PyTorch's Meta): end points
  // (and logspace's base) that fit the dtype.
  for (const bool log : {false, true}) {
    m[log ? "logspace" : "linspace"] = [log](Gen& g) {
      Case c{{}, {}};
      g.factory_options(c);
      const ScalarType dt = g.dtype();
      const bool given = g.chance(0.5);
      const bool byte = given && dt == kByte;
      c.named["dtype"] = given ? g.value(IValue(dt)) : g.none();
      auto end_point = [&] { return byte ? g.value(IValue(g.integer(0, 5))) : g.scalar(); };
      Arg start = end_point();
      Arg end = end_point();
      c.args = {start, end, g.value(IValue(g.integer(g.chance(0.05) ? -1 : 0, 5)))};
      if (log && g.chance(0.7)) {
        c.named["base"] = byte ? g.value(IValue(static_cast<double>(g.integer(0, 3))))
                               : g.value(IValue(static_cast<double>(g.integer(-4, 12)) / 4));
      }
      return c;
    };
  }
  m["arange.start_step"] = [](Gen& g) {
    int64_t start = g.integer(-3, 3), end = start + g.integer(-2, 8);
    auto number = [&](int64_t v) {
      return g.chance(0.7) ? g.value(IValue(v)) : g.value(IValue(v + 0.5));
    };
    int64_t k = g.integer(0, 9);  // steps 1, 2, -1 (wrong sign unless end < start) and 0
    Arg step = k < 5   ? number(1)
               : k < 7 ? number(2)
                       : g.value(IValue(k < 9 ? int64_t{-1} : int64_t{0}));
    Case c{{number(start), number(end), step}, {}};
    g.factory_options(c);
    return c;
  };
  m["scalar_tensor"] = [](Gen& g) {
    Case c{{g.scalar()}, {}};
    g.factory_options(c);
    return c;
  };
  for (const char* name : {"empty_like", "zeros_like", "ones_like", "full_like"}) {
    bool fill = std::string_view(name) == "full_like";
    m[name] = [fill](Gen& g) {
      Case c{{g.tensor()}, {}};
      if (fill) c.args.push_back(g.scalar());
      g.factory_options(c);
      c.named["memory_format"] = g.memory_format(true);
      return c;
    };
  }
}

void add_conversions(std::map<std::string, CaseFn>& m) {
  m["_to_copy"] = [](Gen& g) {
    Case c{{g.tensor()}, {}};
    g.factory_options(c);
    c.named["memory_format"] = g.memory_format(true);
    return c;
  };
  m["to.dtype"] = [](Gen& g) {
    return Case{{g.tensor(), g.value(IValue(g.dtype())), g.value(IValue(false)),
                 g.value(IValue(g.chance(0.5))), g.memory_format(true)},
                {}};
  };
  m["to.device"] = [](Gen& g) {
    return Case{{g.tensor(), g.device(false), g.value(IValue(g.dtype())), g.value(IValue(false)),
                 g.value(IValue(g.chance(0.5))), g.memory_format(true)},
                {}};
  };
  m["copy_"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{{g.tensor(s, g.dtype()), g.tensor(g.broadcastable_to(s), g.dtype())}, {}};
  };
  m["clone"] = [](Gen& g) { return Case{{g.tensor(), g.memory_format(true)}, {}}; };
  m["contiguous"] = [](Gen& g) { return Case{{g.tensor(), g.memory_format(false)}, {}}; };
  m["fill_.Scalar"] = [](Gen& g) { return Case{{g.tensor(), g.scalar()}, {}}; };
  m["fill.Tensor"] = m["fill_.Tensor"] = [](Gen& g) {
    Shape s = g.shape();
    ScalarType dt = g.dtype();
    return Case{{g.tensor(s, dt), g.fitting_value_tensor(g.chance(0.9) ? Shape{} : Shape{2}, dt)},
                {}};
  };
  m["zero_"] = [](Gen& g) { return Case{{g.tensor()}, {}}; };
  m["resize_"] = [](Gen& g) {
    Shape s = g.shape(0, 3);
    if (!s.empty() && g.chance(0.04)) s[0] = -2;
    return Case{{g.tensor(), g.int_list(s), g.memory_format(true)}, {}};
  };
  // The tensor is never pinned, so both answer false; asked about a named device, CPU's answer
  // comes from that device's plugin. pin_memory and _pin_memory are not compared (kNotCompared).
  m["is_pinned"] = [](Gen& g) { return Case{{g.tensor(), g.device(true)}, {}}; };
  for (const char* name : {"_local_scalar_dense", "item"}) {
    m[name] = [](Gen& g) {
      Shape s = g.chance(0.7) ? g.pick(std::vector<Shape>{{}, {1}, {1, 1}}) : g.shape();
      return Case{{g.tensor(s, g.dtype())}, {}};
    };
  }
}

// ---- binary (Operators I) ----------------------------------------------------------------------

// The binary operators of issue 31 (helper "binary"). Division by an integer zero is a data
// error only CPU sees (ZeroDivisionError), so the dividing operators' divisors are floating.
void add_binary_operators_i(std::map<std::string, CaseFn>& m) {
  const auto pair = [](Gen& g) {
    auto [a, b] = tensor_pair(g);
    return Case{{a, b}, {}};
  };
  const auto dividing = [](Gen& g) {
    auto [sa, sb] = g.broadcast_pair();
    return Case{
        {g.tensor(sa, g.dtype()), g.tensor(sb, g.pick(std::vector<ScalarType>{kFloat, kDouble}))},
        {}};
  };
  const auto number = [](Gen& g) { return Case{{g.tensor(), g.scalar()}, {}}; };
  const auto number_self = [](Gen& g) { return Case{{g.scalar(), g.tensor()}, {}}; };
  const std::vector<ScalarType> any = {kFloat, kLong, kBool};
  for (std::string op :
       {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"}) {
    m[op + ".Tensor"] = m[op + "_.Tensor"] = pair;
    m[op + ".Tensor_out"] = with_out(pair, "out", any);
    const bool shift = op.find("shift") != std::string::npos;
    const std::string scalar = shift ? ".Tensor_Scalar" : ".Scalar";
    m[op + scalar] = m[op + "_" + scalar] = number;
    m[op + scalar + "_out"] = with_out(number, "out", any);
    m[op + ".Scalar_Tensor"] = number_self;
  }
  for (std::string op : {"logical_and", "logical_or", "logical_xor"}) {
    m[op] = m[op + "_"] = pair;
    m[op + ".out"] = with_out(pair, "out", any);
  }
  for (std::string op : {"atan2", "hypot"}) {
    m[op] = m[op + "_"] = pair;
    m[op + ".out"] = with_out(pair, "out", {kFloat, kDouble});
  }
  m["copysign.Tensor"] = m["copysign_.Tensor"] = pair;
  m["copysign.out"] = with_out(pair, "out", {kFloat, kDouble});
  m["copysign.Scalar"] = m["copysign_.Scalar"] = number;
  m["copysign.Scalar_out"] = with_out(number, "out", {kFloat, kDouble});
  m["true_divide.Tensor"] = m["true_divide_.Tensor"] = dividing;
  m["true_divide.out"] = with_out(dividing, "out", {kFloat, kDouble});
  m["true_divide.Scalar"] = m["true_divide_.Scalar"] = number;
  for (std::string op : {"remainder", "fmod"}) {
    m[op + ".Tensor"] = m[op + "_.Tensor"] = dividing;
    m[op + ".Tensor_out"] = with_out(dividing, "out", any);
    m[op + ".Scalar"] = m[op + "_.Scalar"] = [](Gen& g) {
      return Case{{g.tensor(), g.value(IValue(g.real(0.5, 3)))}, {}};
    };
    m[op + ".Scalar_out"] = with_out(m[op + ".Scalar"], "out", any);
  }
  m["remainder.Scalar_Tensor"] = [](Gen& g) {
    return Case{{g.scalar(), g.tensor(g.shape(), g.pick(std::vector<ScalarType>{kFloat, kDouble}))},
                {}};
  };
  m["floor_divide"] = m["floor_divide_.Tensor"] = dividing;
  m["floor_divide.out"] = with_out(dividing, "out", any);
  m["floor_divide.Scalar"] = m["floor_divide_.Scalar"] = m["remainder.Scalar"];
  const auto rounding = [](Gen& g) {
    return g.chance(0.2) ? g.none()
                         : g.value(IValue(g.pick(std::vector<std::string>{"trunc", "floor", "x"})));
  };
  m["div.Tensor_mode"] = m["div_.Tensor_mode"] = [dividing, rounding](Gen& g) {
    Case c = dividing(g);
    c.named["rounding_mode"] = rounding(g);
    return c;
  };
  m["div.out_mode"] = with_out(m["div.Tensor_mode"], "out", any);
  m["div.Scalar_mode"] = m["div_.Scalar_mode"] = [rounding](Gen& g) {
    Case c{{g.tensor(), g.value(IValue(g.real(0.5, 3)))}, {}};
    c.named["rounding_mode"] = rounding(g);
    return c;
  };
  const auto lerp_scalar = [](Gen& g) {
    auto [a, b] = tensor_pair(g, /*floating=*/true);
    return Case{{a, b, g.scalar()}, {}};
  };
  m["lerp.Scalar"] = m["lerp_.Scalar"] = lerp_scalar;
  m["lerp.Scalar_out"] = with_out(lerp_scalar, "out", {kFloat, kDouble});
  const auto lerp_tensor = [](Gen& g) {
    auto [a, b] = tensor_pair(g, /*floating=*/true);
    return Case{{a, b, g.tensor(g.shape(0, 1), g.float_dtype())}, {}};
  };
  m["lerp.Tensor"] = m["lerp_.Tensor"] = lerp_tensor;
  m["lerp.Tensor_out"] = with_out(lerp_tensor, "out", {kFloat, kDouble});
  for (std::string op : {"addcmul", "addcdiv"}) {
    const auto ternary = [](Gen& g) {
      auto [a, b] = tensor_pair(g);
      return Case{{a, b, g.tensor(g.shape(0, 1), g.float_dtype())}, {{"value", g.scalar()}}};
    };
    m[op] = m[op + "_"] = ternary;
    m[op + ".out"] = with_out(ternary, "out", {kFloat, kDouble});
  }
  for (std::string op : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    m[op + "_.Tensor"] = pair;
    m[op + ".Tensor_out"] = with_out(pair, "out", any);
    m[op + "_.Scalar"] = number;
    m[op + ".Scalar_out"] = with_out(number, "out", any);
  }
  m["where.ScalarSelf"] = [](Gen& g) {
    return Case{{g.tensor(g.shape(), kBool), g.scalar(), g.tensor()}, {}};
  };
  m["where.ScalarOther"] = [](Gen& g) {
    return Case{{g.tensor(g.shape(), kBool), g.tensor(), g.scalar()}, {}};
  };
  m["where.Scalar"] = [](Gen& g) {
    return Case{{g.tensor(g.shape(), kBool), g.scalar(), g.scalar()}, {}};
  };
}

void add_pointwise(std::map<std::string, CaseFn>& m) {
  for (const char* name : {"add.Tensor", "add_.Tensor", "sub.Tensor", "sub_.Tensor"}) {
    m[name] = [](Gen& g) {
      auto [a, b] = tensor_pair(g);
      return Case{{a, b, alpha(g)}, {}};
    };
  }
  for (const char* name : {"add.out", "sub.out", "mul.out", "div.out"}) {
    bool with_alpha = name[0] == 'a' || name[0] == 's';
    m[name] = [with_alpha](Gen& g) {
      auto [sa, sb] = g.broadcast_pair();
      Shape out = g.chance(0.6) ? broadcast_shape(sa, sb) : g.shape();
      Case c{{g.tensor(sa, g.dtype()), g.tensor(sb, g.dtype())}, {}};
      if (with_alpha) c.args.push_back(alpha(g));
      c.named["out"] = g.tensor(out, g.chance(0.5) ? kFloat : g.dtype());
      return c;
    };
  }
  for (const char* name :
       {"mul.Tensor", "mul_.Tensor", "div.Tensor", "div_.Tensor", "pow.Tensor_Tensor", "maximum",
        "minimum", "eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor"}) {
    m[name] = [](Gen& g) {
      auto [a, b] = tensor_pair(g);
      return Case{{a, b}, {}};
    };
  }
  for (const char* name : {"add.Scalar", "add_.Scalar", "sub.Scalar", "sub_.Scalar"}) {
    m[name] = [](Gen& g) { return Case{{g.tensor(), g.scalar(), alpha(g)}, {}}; };
  }
  for (const char* name :
       {"mul.Scalar", "mul_.Scalar", "div.Scalar", "div_.Scalar", "pow.Tensor_Scalar", "eq.Scalar",
        "ne.Scalar", "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar"}) {
    m[name] = [](Gen& g) { return Case{{g.tensor(), g.scalar()}, {}}; };
  }
  m["where.self"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{
        {g.tensor(g.broadcastable_to(s), g.chance(0.85) ? kBool : g.dtype()),
         g.tensor(g.broadcastable_to(s), g.dtype()), g.tensor(g.broadcastable_to(s), g.dtype())},
        {}};
  };
  for (const char* name : {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh",
                           "sigmoid", "relu", "relu_"}) {
    m[name] = [](Gen& g) { return Case{{g.tensor()}, {}}; };
  }
  m["gelu"] = [](Gen& g) {
    return Case{{g.tensor(g.shape(), g.float_dtype()),
                 g.value(IValue(g.pick(std::vector<std::string>{"none", "tanh", "none", "bad"})))},
                {}};
  };
  m["clamp"] = [](Gen& g) {
    return Case{{g.tensor(), maybe(g, g.scalar()), maybe(g, g.scalar())}, {}};
  };
}

void add_reductions(std::map<std::string, CaseFn>& m) {
  for (const char* name : {"sum", "mean"}) {
    bool floating = name[0] == 'm';
    m[name] = [floating](Gen& g) {
      return Case{{g.tensor(g.shape(), floating ? g.float_dtype() : g.dtype()), g.optional_dtype()},
                  {}};
    };
  }
  for (const char* name : {"sum.dim_IntList", "mean.dim"}) {
    bool floating = name[0] == 'm';
    m[name] = [floating](Gen& g) {
      Shape s = g.shape();
      return Case{
          {g.tensor(s, floating ? g.float_dtype() : g.dtype()), maybe(g, g.dims(rank_of(s)), 0.2),
           g.value(IValue(g.chance(0.5))), g.optional_dtype()},
          {}};
    };
  }
  for (const char* name : {"amax", "amin"}) {
    m[name] = [](Gen& g) {
      Shape s = g.shape();
      return Case{{g.tensor(s, g.dtype()), g.dims(rank_of(s)), g.value(IValue(g.chance(0.5)))}, {}};
    };
  }
  m["argmax"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{
        {g.tensor(s, g.dtype()), maybe(g, g.dim(rank_of(s))), g.value(IValue(g.chance(0.5)))}, {}};
  };
  m["sum.IntList_out"] = with_out(m.at("sum.dim_IntList"), "out", {kFloat, kLong, kDouble});
  m["mean.out"] = with_out(m.at("mean.dim"), "out", {kFloat, kDouble});
  m["amax.out"] = with_out(m.at("amax"), "out", {kFloat, kLong});
  m["amin.out"] = with_out(m.at("amin"), "out", {kFloat, kLong});
  m["argmax.out"] = with_out(m.at("argmax"), "out", {kLong});
  m["max.dim"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{{g.tensor(s, g.dtype()), g.dim(rank_of(s)), g.value(IValue(g.chance(0.5)))}, {}};
  };
}

void add_linalg(std::map<std::string, CaseFn>& m) {
  // Matrix operands: mostly one floating dtype for both, now and then mixed or integral.
  auto dtypes = [](Gen& g) {
    ScalarType a = g.chance(0.8) ? g.pick(std::vector<ScalarType>{kFloat, kDouble}) : g.dtype();
    return std::pair{a, g.chance(0.85) ? a : g.dtype()};
  };
  auto inner = [](Gen& g, int64_t k) { return g.chance(0.85) ? k : k + 1; };
  // _pdist_backward: grad and pdist mostly of one value per pair of self's rows and self's dtype
  // (the schema-driven default rarely drew such a case once the kernel's reads were checked).
  m["_pdist_backward"] = [](Gen& g) {
    const int64_t n = g.integer(0, 4), cols = g.integer(0, 3);
    const int64_t pairs = n <= 1 ? 0 : n * (n - 1) / 2;
    const ScalarType dt = g.float_dtype();
    auto distances = [&] {
      return g.tensor({g.chance(0.9) ? pairs : pairs + 1}, g.chance(0.9) ? dt : g.dtype());
    };
    Arg grad = distances();
    Arg self = g.tensor(g.chance(0.9) ? Shape{n, cols} : g.shape(), dt);
    Arg p = g.value(IValue(static_cast<double>(g.integer(0, 12)) / 4));
    return Case{{grad, self, p, distances()}, {}};
  };
  m["mm"] = [=](Gen& g) {
    int64_t rows = g.integer(0, 4), k = g.integer(0, 4), n = g.integer(0, 4);
    auto [da, db] = dtypes(g);
    Shape a = g.chance(0.05) ? Shape{k} : Shape{rows, k};
    return Case{{g.tensor(a, da), g.tensor({inner(g, k), n}, db)}, {}};
  };
  m["bmm"] = [=](Gen& g) {
    int64_t b = g.integer(0, 3), rows = g.integer(0, 3), k = g.integer(0, 3), n = g.integer(0, 3);
    auto [da, db] = dtypes(g);
    Shape a = g.chance(0.05) ? Shape{rows, k} : Shape{b, rows, k};
    return Case{{g.tensor(a, da), g.tensor({g.chance(0.9) ? b : b + 1, inner(g, k), n}, db)}, {}};
  };
  m["addmm"] = [=](Gen& g) {
    int64_t rows = g.integer(0, 4), k = g.integer(0, 4), n = g.integer(0, 4);
    auto [da, db] = dtypes(g);
    Shape self =
        g.pick(std::vector<Shape>{{rows, n}, {rows, n}, {n}, {1, n}, {rows, 1}, {}, {rows + 1, n}});
    // beta and alpha convert to a uint8 result only when >= 0: CPU refuses the others when it
    // converts them, which PyTorch's Meta does not check either.
    auto factor = [&] { return da == kByte ? g.value(IValue(g.integer(0, 3))) : alpha(g); };
    Arg beta = factor();
    Arg alpha_ = factor();
    return Case{{g.tensor(self, g.chance(0.85) ? da : g.dtype()), g.tensor({rows, k}, da),
                 g.tensor({inner(g, k), n}, db), beta, alpha_},
                {}};
  };
  m["matmul"] = [=](Gen& g) {
    auto [ba, bb] = g.broadcast_pair();
    ba.resize(std::min<size_t>(ba.size(), 2));
    bb.resize(std::min<size_t>(bb.size(), 2));
    int64_t rows = g.integer(0, 3), k = g.integer(0, 3), n = g.integer(0, 3);
    auto [da, db] = dtypes(g);
    auto operand = [&](Shape batch, Shape matrix, Shape vec) {
      int64_t kind = g.integer(0, 19);
      if (kind == 0) return Shape{};
      if (kind <= 4) return vec;
      batch.insert(batch.end(), matrix.begin(), matrix.end());
      return batch;
    };
    return Case{{g.tensor(operand(ba, {rows, k}, {k}), da),
                 g.tensor(operand(bb, {inner(g, k), n}, {inner(g, k)}), db)},
                {}};
  };
  m["linear"] = [=](Gen& g) {
    int64_t k = g.integer(0, 4), n = g.integer(0, 4);
    auto [da, db] = dtypes(g);
    Shape input = g.shape(0, 2);
    input.push_back(k);
    int64_t b = g.integer(0, 9);
    Arg bias = b < 4   ? g.none()
               : b < 8 ? g.tensor({n}, da)
                       : g.tensor(g.pick(std::vector<Shape>{{1}, {}, {n + 1}}), da);
    return Case{{g.tensor(input, da), g.tensor({n, inner(g, k)}, db), bias}, {}};
  };
}

void add_views(std::map<std::string, CaseFn>& m) {
  for (const char* name : {"view", "reshape"}) {
    m[name] = [](Gen& g) {
      Shape s = g.shape();
      return Case{{g.tensor(s, g.dtype()), g.int_list(reshape_target(g, numel_of(s)))}, {}};
    };
  }
  // view_copy.dtype reads the reinterpreted elements: a Bool target only over Bool data, since
  // a byte other than 0 and 1 is no bool (reading one is undefined, and UBSan says so).
  m["view_copy.dtype"] = [](Gen& g) {
    const ScalarType from = g.dtype();
    ScalarType to = g.dtype();
    if (to == kBool && from != kBool) to = kByte;
    return Case{{g.tensor(g.shape(), from), g.value(IValue(to))}, {}};
  };
  m["as_strided"] = [](Gen& g) {
    Shape size = g.shape(0, 3), stride(size.size());
    for (int64_t& s : stride) s = g.integer(0, 3);
    return Case{{g.tensor(), g.int_list(size), g.int_list(stride),
                 maybe(g, g.value(IValue(g.integer(0, 4))), 0.5)},
                {}};
  };
  m["transpose.int"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{{g.tensor(s, g.dtype()), g.dim(rank_of(s)), g.dim(rank_of(s))}, {}};
  };
  m["t"] = [](Gen& g) { return Case{{g.tensor()}, {}}; };
  m["permute"] = [](Gen& g) {
    Shape s = g.shape();
    Shape dims(s.size());
    std::iota(dims.begin(), dims.end(), 0);
    for (size_t i = dims.size(); i > 1; --i)
      std::swap(dims[i - 1], dims[static_cast<size_t>(g.integer(0, static_cast<int64_t>(i) - 1))]);
    for (int64_t& d : dims) {
      if (g.chance(0.3)) d -= rank_of(s);
    }
    if (g.chance(0.08)) dims.push_back(0);
    return Case{{g.tensor(s, g.dtype()), g.int_list(dims)}, {}};
  };
  m["expand"] = [](Gen& g) {
    Shape s = g.shape(), target;
    for (int64_t i = g.integer(0, 1); i > 0; --i) target.push_back(g.integer(0, 3));
    for (int64_t d : s)
      target.push_back(d == 1 ? g.pick(Shape{1, 2, 3, -1, 0}) : g.pick(Shape{d, d, -1}));
    if (!target.empty() && g.chance(0.07)) target.back() += 2;
    return Case{{g.tensor(s, g.dtype()), g.int_list(target), g.value(IValue(g.chance(0.1)))}, {}};
  };
  m["squeeze.dim"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{{g.tensor(s, g.dtype()), g.dim(rank_of(s))}, {}};
  };
  m["unsqueeze"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{{g.tensor(s, g.dtype()), g.dim(rank_of(s) + 1)}, {}};
  };
  m["slice.Tensor"] = [](Gen& g) {
    Shape s = g.shape(g.chance(0.05) ? 0 : 1, 3);
    Arg step = g.value(IValue(g.chance(0.05) ? int64_t{0} : g.integer(1, 3)));
    return Case{
        {g.tensor(s, g.dtype()), g.dim(rank_of(s)), maybe(g, g.value(IValue(g.integer(-5, 5)))),
         maybe(g, g.value(IValue(g.integer(-5, 6)))), step},
        {}};
  };
  m["select.int"] = [](Gen& g) {
    Shape s = g.shape();
    int64_t r = std::max<int64_t>(rank_of(s), 1);
    int64_t d = g.chance(0.05) ? r : g.integer(-r, r - 1);
    int64_t size = s.empty() || d >= r ? 1 : s[static_cast<size_t>(d < 0 ? d + r : d)];
    return Case{
        {g.tensor(s, g.dtype()), g.value(IValue(d)), g.value(IValue(g.integer(-size - 1, size)))},
        {}};
  };
  m["flatten.using_ints"] = [](Gen& g) {
    Shape s = g.shape();
    return Case{{g.tensor(s, g.dtype()), g.dim(rank_of(s)), g.dim(rank_of(s))}, {}};
  };
  m["cat"] = [](Gen& g) {
    Shape s = g.shape(g.chance(0.05) ? 0 : 1, 3);
    int64_t r = std::max<int64_t>(rank_of(s), 1);
    int64_t d = g.chance(0.05) ? r : g.integer(-r, r - 1);
    ScalarType dt = g.dtype();
    std::vector<Arg> parts;
    for (int64_t i = g.integer(1, 3); i > 0; --i) {
      Shape p = s;
      if (!p.empty() && d < r) p[static_cast<size_t>(d < 0 ? d + r : d)] = g.integer(0, 3);
      if (!p.empty() && g.chance(0.06)) p[0] += 1;
      if (g.chance(0.06)) p = {0};  // the legacy empty tensor that cat skips
      parts.push_back(g.tensor(p, g.chance(0.7) ? dt : g.dtype()));
    }
    return Case{{g.tensor_list(std::move(parts)), g.value(IValue(d))}, {}};
  };
}

void add_nn(std::map<std::string, CaseFn>& m) {
  // half_to_float stays false: it is a CPU-specific refusal ("not supported on CPU") that a Meta
  // kernel cannot know about, as in PyTorch.
  for (const char* name : {"_softmax", "_log_softmax"}) {
    m[name] = [](Gen& g) {
      Shape s = g.shape();
      return Case{{g.tensor(s, g.float_dtype()), g.dim(rank_of(s)), g.value(IValue(false))}, {}};
    };
  }
  m["_softmax.out"] = with_out(m.at("_softmax"), "out", {kFloat, kDouble});
  m["_log_softmax.out"] = with_out(m.at("_log_softmax"), "out", {kFloat, kDouble});
  for (const char* name : {"softmax.int", "log_softmax.int"}) {
    m[name] = [](Gen& g) {
      Shape s = g.shape();
      Arg dtype = g.chance(0.6) ? g.none() : g.value(IValue(g.float_dtype()));
      return Case{{g.tensor(s, g.float_dtype()), g.dim(rank_of(s)), dtype}, {}};
    };
  }
  for (const char* name : {"nll_loss_forward", "nll_loss", "cross_entropy_loss"}) {
    bool ce = name[0] == 'c';
    m[name] = [ce](Gen& g) {
      LossInputs l = loss_inputs(g, ce);
      Case c{{l.self, l.target_arg, l.weight, g.value(IValue(l.reduction)),
              g.value(IValue(l.ignore_index))},
             {}};
      if (ce)
        c.args.push_back(g.value(IValue(g.pick(std::vector<double>{0.0, 0.0, 0.1, 0.5, 1.5}))));
      return c;
    };
  }
  m["nll_loss_backward"] = [](Gen& g) {
    LossInputs l = loss_inputs(g, false);
    Shape grad = l.reduction == 0 ? l.target : Shape{};
    if (g.chance(0.05)) grad = {2};
    return Case{
        {g.tensor(grad, l.dtype), l.self, l.target_arg, l.weight, g.value(IValue(l.reduction)),
         g.value(IValue(l.ignore_index)), g.tensor({}, l.dtype)},
        {}};
  };
  m["mse_loss"] = [](Gen& g) {
    auto [a, b] = tensor_pair(g, true);
    return Case{{a, b, g.reduction()}, {}};
  };
  m["mse_loss_backward"] = [](Gen& g) {
    auto [sa, sb] = g.broadcast_pair();
    int64_t reduction = g.integer(0, 2);
    Shape grad = reduction == 0 ? broadcast_shape(sa, sb) : Shape{};
    ScalarType dt = g.float_dtype();
    return Case{{g.tensor(grad, dt), g.tensor(sa, dt), g.tensor(sb, g.float_dtype()),
                 g.value(IValue(reduction))},
                {}};
  };
  m["threshold_backward"] = [](Gen& g) {
    auto [a, b] = tensor_pair(g);
    return Case{{a, b, g.scalar()}, {}};
  };
  for (const char* name : {"sigmoid_backward", "tanh_backward"}) {
    m[name] = [](Gen& g) {
      auto [a, b] = tensor_pair(g, true);
      return Case{{a, b}, {}};
    };
  }
  m["gelu_backward"] = [](Gen& g) {
    auto [a, b] = tensor_pair(g, true);
    return Case{
        {a, b, g.value(IValue(g.pick(std::vector<std::string>{"none", "tanh", "tanh", "bad"})))},
        {}};
  };
  for (const char* name : {"_softmax_backward_data", "_log_softmax_backward_data"}) {
    m[name] = [](Gen& g) {
      Shape s = g.shape();
      ScalarType dt = g.float_dtype();
      Shape out = g.chance(0.9) ? s : g.shape();
      return Case{{g.tensor(s, dt), g.tensor(out, g.chance(0.9) ? dt : g.float_dtype()),
                   g.dim(rank_of(s)), g.value(IValue(g.chance(0.85) ? dt : g.float_dtype()))},
                  {}};
    };
  }
  m["_softmax_backward_data.out"] =
      with_out(m.at("_softmax_backward_data"), "grad_input", {kFloat, kDouble});
  m["_log_softmax_backward_data.out"] =
      with_out(m.at("_log_softmax_backward_data"), "out", {kFloat, kDouble});
}

void add_autograd(std::map<std::string, CaseFn>& m) {
  // A leaf x (requiring grad half the time when autograd is loaded) and y = sum(x * x).
  auto leaf_and_loss = [](Gen& g) {
    Arg x = g.shared(g.grad_tensor(g.shape()));
    Arg y = g.shared(g.derived(
        {x},
        [](const std::vector<IValue>& v) {
          const Tensor& t = v[0].to_tensor();
          return IValue(opd::sum(opd::mul(t, t)));
        },
        "sum(x * x) of x = " + x.text));
    return std::pair{x, y};
  };
  // Some tensor: a plain one, a leaf or a non-leaf.
  auto some_tensor = [=](Gen& g) {
    auto [x, y] = leaf_and_loss(g);
    int64_t kind = g.integer(0, 2);
    return kind == 0 ? g.tensor() : kind == 1 ? x : y;
  };
  m["_backward"] = [=](Gen& g) {
    auto [x, y] = leaf_and_loss(g);
    Arg self = g.chance(0.8) ? y : x;
    std::vector<Arg> inputs;
    if (g.chance(0.5)) inputs.push_back(x);
    Arg gradient = g.chance(0.7) ? g.none() : g.tensor({}, kFloat);
    return Case{{self, g.tensor_list(inputs), gradient, maybe(g, g.value(IValue(true)), 0.7),
                 g.value(IValue(false))},
                {}};
  };
  m["requires_grad_"] = [](Gen& g) {
    return Case{{g.tensor(), g.value(IValue(g.chance(0.7)))}, {}};
  };
  for (const char* name : {"retain_grad", "retains_grad", "is_leaf", "output_nr", "_version",
                           "detach", "_opd_grad", "_opd_requires_grad"}) {
    m[name] = [=](Gen& g) { return Case{{some_tensor(g)}, {}}; };
  }
  m["_opd_set_grad"] = [](Gen& g) {
    Shape s = g.shape();
    Arg grad = g.chance(0.3)
                   ? g.none()
                   : g.tensor(g.chance(0.8) ? s : g.shape(), g.chance(0.8) ? kFloat : g.dtype());
    return Case{{g.grad_tensor(s), grad}, {}};
  };
  m["select_backward"] = [](Gen& g) {
    Shape sizes = g.shape(1, 3);
    int64_t r = rank_of(sizes), d = g.integer(-r, r - 1), dd = d < 0 ? d + r : d;
    int64_t index = g.chance(0.05)
                        ? sizes[dd]
                        : g.integer(-sizes[dd], std::max<int64_t>(sizes[dd] - 1, -sizes[dd]));
    Shape grad = sizes;
    grad.erase(grad.begin() + dd);
    if (g.chance(0.05)) grad.push_back(2);
    return Case{{g.tensor(grad, g.float_dtype()), g.int_list(sizes), g.value(IValue(d)),
                 g.value(IValue(index))},
                {}};
  };
  m["slice_backward"] = [](Gen& g) {
    Shape sizes = g.shape(1, 3);
    int64_t r = rank_of(sizes), d = g.integer(-r, r - 1), dd = d < 0 ? d + r : d;
    int64_t start = g.integer(0, sizes[dd]), end = g.integer(start, sizes[dd]),
            step = g.integer(1, 3);
    Shape grad = sizes;
    grad[dd] = (end - start + step - 1) / step;
    if (g.chance(0.05)) grad[dd] += 1;
    return Case{{g.tensor(grad, g.float_dtype()), g.int_list(sizes), g.value(IValue(d)),
                 g.value(IValue(start)), g.value(IValue(end)), g.value(IValue(step))},
                {}};
  };
  m["_opd_autograd_grad"] = [=](Gen& g) {
    auto [x, y] = leaf_and_loss(g);
    Arg input = g.chance(0.85) ? x : g.grad_tensor(g.shape());
    std::vector<Arg> grads;
    if (g.chance(0.4)) grads.push_back(g.tensor({}, kFloat));
    return Case{{g.tensor_list({y}), g.tensor_list({input}), g.tensor_list(grads), g.none(),
                 g.value(IValue(false)), g.value(IValue(g.chance(0.5)))},
                {}};
  };
}

// ---- unary (Operators I) ----
// The unary operators of Operators I and the in-place and out= forms of the earlier ones: any
// dtype (the refused ones compare their errors too), any layout.
void add_unary(std::map<std::string, CaseFn>& m) {
  const auto one_tensor = [](Gen& g) { return Case{{g.tensor()}, {}}; };
  for (const char* name :
       {"exp",  "log",        "sqrt",  "rsqrt",       "sin",        "cos",   "tanh",  "sigmoid",
        "neg",  "abs",        "floor", "ceil",        "round",      "trunc", "frac",  "sign",
        "sgn",  "reciprocal", "log1p", "expm1",       "log2",       "log10", "exp2",  "erf",
        "erfc", "erfinv",     "asin",  "acos",        "atan",       "asinh", "acosh", "atanh",
        "sinh", "cosh",       "tan",   "bitwise_not", "logical_not"}) {
    const std::string op = name;
    if (!m.count(op)) m[op] = one_tensor;
    m[op + "_"] = one_tensor;
    m[op + ".out"] = with_out(one_tensor, "out", {kFloat, kLong, kBool});
  }
  for (const char* name : {"isposinf", "isneginf"}) {
    m[name] = one_tensor;
    m[std::string(name) + ".out"] = with_out(one_tensor, "out", {kBool, kFloat});
  }
  for (const char* name : {"isnan", "isinf", "isfinite", "square", "square_"}) m[name] = one_tensor;
  m["square.out"] = with_out(one_tensor, "out", {kFloat, kLong});
  const auto decimals = [](Gen& g) {
    return Case{{g.tensor()}, {{"decimals", g.value(IValue(g.integer(-2, 3)))}}};
  };
  m["round.decimals"] = m["round_.decimals"] = decimals;
  m["round.decimals_out"] = with_out(decimals, "out", {kFloat, kDouble});
  const auto nan_to_num = [](Gen& g) {
    auto number = [&] { return maybe(g, g.value(IValue(g.chance(0.5) ? 1.5 : -2.0))); };
    return Case{{g.tensor(), number(), number(), number()}, {}};
  };
  m["nan_to_num"] = m["nan_to_num_"] = nan_to_num;
  m["nan_to_num.out"] = with_out(nan_to_num, "out", {kFloat, kLong});
  const auto clamp_scalar = m.at("clamp");
  m["clamp_"] = clamp_scalar;
  m["clamp.out"] = with_out(clamp_scalar, "out", {kFloat, kLong});
  const auto clamp_tensor = [](Gen& g) {
    Shape s = g.shape();
    return Case{{g.tensor(s, g.dtype()), maybe(g, g.tensor(g.broadcastable_to(s), g.dtype())),
                 maybe(g, g.tensor(g.broadcastable_to(s), g.dtype()))},
                {}};
  };
  m["clamp.Tensor"] = m["clamp_.Tensor"] = clamp_tensor;
  m["clamp.Tensor_out"] = with_out(clamp_tensor, "out", {kFloat, kLong});
  for (const std::string name : {"clamp_min", "clamp_max"}) {
    const auto scalar = [](Gen& g) { return Case{{g.tensor(), g.scalar()}, {}}; };
    const auto tensor = [](Gen& g) {
      Shape s = g.shape();
      return Case{{g.tensor(s, g.dtype()), g.tensor(g.broadcastable_to(s), g.dtype())}, {}};
    };
    m[name] = m[name + "_"] = scalar;
    m[name + ".out"] = with_out(scalar, "out", {kFloat, kLong});
    m[name + ".Tensor"] = m[name + "_.Tensor"] = tensor;
    m[name + ".Tensor_out"] = with_out(tensor, "out", {kFloat, kLong});
  }
}

std::map<std::string, CaseFn> build() {
  std::map<std::string, CaseFn> m;
  add_factories(m);
  add_conversions(m);
  add_pointwise(m);
  add_binary_operators_i(m);
  add_unary(m);
  add_reductions(m);
  add_linalg(m);
  add_views(m);
  add_nn(m);
  add_autograd(m);
  add_index_cases(m);
  add_missing_op_cases(m);
  add_random_op_cases(m);
  add_surface_op_cases(m);
  add_loss_op_cases(m);
  add_norm_op_cases(m);
  add_pool_op_cases(m);
  add_conv_op_cases(m);
  return m;
}

}  // namespace

const std::map<std::string, CaseFn>& case_generators() {
  static const std::map<std::string, CaseFn> generators = build();
  return generators;
}

}  // namespace opd::test::meta_vs_cpu
