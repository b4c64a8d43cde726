// Hand-written case generators of the Meta-vs-CPU property test for operators whose valid
// arguments need structure the schema-driven default cannot draw: index tensors in range
// (gather, scatter, index_select, index_add, index, index_put, take_along_dim), masks of the
// right shape, split sizes summing to the size, repeat counts, einsum equations, topk's k, the
// src of the *_scatter operators. Index values are always in range: only CPU reads them, so an
// out-of-range one would raise on CPU alone; the invalid calls are of shape, rank and dtype.

#include <algorithm>
#include <numeric>

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

// A dimension of `s` in [-rank, rank) (0 or -1 for a 0-dim shape) and its non-negative form.
std::pair<int64_t, int64_t> pick_dim(Gen& g, const Shape& s) {
  int64_t r = std::max<int64_t>(rank_of(s), 1);
  int64_t d = g.integer(-r, r - 1);
  return {d, d < 0 ? d + r : d};
}

// The size of dimension `d` of `s` (1 for a 0-dim shape).
int64_t size_at(const Shape& s, int64_t d) { return s.empty() ? 1 : s[static_cast<size_t>(d)]; }

// An index tensor of `sizes` whose values lie in [low, bound) (Long, now and then Int, which
// some operators refuse). A tensor with elements but no valid value becomes a size-0 one.
Arg index_tensor(Gen& g, Shape sizes, int64_t low, int64_t bound, double other_dtype = 0.05) {
  if (bound <= low && numel_of(sizes) > 0) {
    if (sizes.empty()) sizes = {0};
    sizes[0] = 0;
  }
  TensorRecipe r = g.recipe(std::move(sizes), g.chance(other_dtype) ? kInt : kLong);
  for (double& v : r.values) v = static_cast<double>(bound > low ? g.integer(low, bound - 1) : 0);
  return g.tensor(r);
}

// A Scalar that a tensor of `dtype` can hold: CPU refuses a value that overflows UInt8 when it
// writes it, a check of values that Meta does not make (as in PyTorch).
Arg fitting_scalar(Gen& g, ScalarType dtype) {
  return dtype == kByte ? g.value(IValue(g.integer(0, 5))) : g.scalar();
}

// The out= form of a generator: an out tensor, mostly empty (resized), of `dtype` mostly.
CaseFn out_form(CaseFn functional, std::string name = "out") {
  return [functional, name](Gen& g) {
    Case c = functional(g);
    c.named[name] =
        g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), g.chance(0.3) ? g.dtype() : kFloat);
    return c;
  };
}

// gather / scatter: self, dim and an index of the same rank no larger than self outside dim.
struct ScatterArgs {
  Shape self, index;
  int64_t dim;
  ScalarType dtype;
};
ScatterArgs scatter_args(Gen& g) {
  ScatterArgs a;
  a.self = g.shape();
  a.dtype = g.dtype();
  auto [d, dd] = pick_dim(g, a.self);
  a.dim = d;
  a.index = a.self;
  for (size_t i = 0; i < a.index.size(); ++i) {
    a.index[i] = static_cast<int64_t>(i) == dd ? g.integer(0, 4) : g.integer(0, a.self[i]);
  }
  if (g.chance(0.05)) a.index.push_back(1);  // a rank mismatch
  return a;
}

Case gather_case(Gen& g) {
  ScatterArgs a = scatter_args(g);
  return Case{
      {g.tensor(a.self, a.dtype), g.value(IValue(a.dim)),
       index_tensor(
           g, a.index, 0,
           size_at(a.self, a.dim < 0 ? a.dim + std::max<int64_t>(rank_of(a.self), 1) : a.dim))},
      {}};
}

// scatter with a src tensor (src_kind 1), a value (2); reduce choices when it takes one.
CaseFn scatter_case(bool src_tensor, std::vector<std::string> reduces, bool reduce_kwarg) {
  return [=](Gen& g) {
    ScatterArgs a = scatter_args(g);
    int64_t dd = a.dim < 0 ? a.dim + std::max<int64_t>(rank_of(a.self), 1) : a.dim;
    Case c;
    c.named["self"] = g.tensor(a.self, a.dtype);
    c.named["dim"] = g.value(IValue(a.dim));
    c.named["index"] = index_tensor(g, a.index, 0, size_at(a.self, dd));
    if (src_tensor) {
      Shape src = a.index;
      for (int64_t& s : src) s += g.chance(0.8) ? 0 : 1;
      if (!src.empty() && g.chance(0.04)) src[0] = 0;  // smaller than the index
      c.named["src"] = g.tensor(src, g.chance(0.85) ? a.dtype : g.dtype());
    } else {
      c.named["value"] = fitting_scalar(g, a.dtype);
    }
    if (!reduces.empty()) c.named["reduce"] = g.value(IValue(g.pick(reduces)));
    if (reduce_kwarg) c.named["include_self"] = g.value(IValue(g.chance(0.5)));
    return c;
  };
}

Case index_select_case(Gen& g) {
  Shape s = g.shape();
  auto [d, dd] = pick_dim(g, s);
  Shape is = g.chance(0.85) ? Shape{g.integer(0, 4)} : g.chance(0.7) ? Shape{} : Shape{2, 2};
  return Case{{g.tensor(s, g.dtype()), g.value(IValue(d)), index_tensor(g, is, 0, size_at(s, dd))},
              {}};
}

Case index_add_case(Gen& g) {
  Shape s = g.shape();
  ScalarType dt = g.dtype();
  auto [d, dd] = pick_dim(g, s);
  int64_t n = g.integer(0, 4);
  Shape source = s;
  if (!source.empty()) source[static_cast<size_t>(dd)] = n;
  if (g.chance(0.05)) source.push_back(2);
  return Case{{g.tensor(s, dt), g.value(IValue(d)), index_tensor(g, {n}, 0, size_at(s, dd)),
               g.tensor(source, g.chance(0.85) ? dt : g.dtype())},
              {{"alpha", g.chance(0.7) ? g.value(IValue(int64_t{1})) : fitting_scalar(g, dt)}}};
}

Case take_along_dim_case(Gen& g) {
  Shape s = g.shape();
  if (g.chance(0.3)) {  // dim=None: indices into the flattened self
    return Case{{g.tensor(s, g.dtype()), index_tensor(g, g.shape(0, 2), 0, numel_of(s)), g.none()},
                {}};
  }
  auto [d, dd] = pick_dim(g, s);
  Shape is = s;
  for (size_t i = 0; i < is.size(); ++i) {
    is[i] = static_cast<int64_t>(i) == dd ? g.integer(0, 3) : g.chance(0.3) ? 1 : is[i];
  }
  return Case{{g.tensor(s, g.dtype()), index_tensor(g, is, 0, size_at(s, dd)), g.value(IValue(d))},
              {}};
}

// The indices of index / index_put: None or Long index tensors in [-size, size) of the dims
// they index, of shapes that broadcast together (mostly).
Arg indices_arg(Gen& g, const Shape& s) {
  Shape common = g.shape(0, 2);
  int64_t count = g.integer(g.chance(0.9) ? 1 : 0, std::max<int64_t>(rank_of(s), 1));
  if (g.chance(0.05)) count = rank_of(s) + 1;  // too many indices
  std::vector<Arg> items;
  bool any = false;
  for (int64_t i = 0; i < count; ++i) {
    int64_t size = i < rank_of(s) ? s[static_cast<size_t>(i)] : 1;
    if (g.chance(0.3) && !(i == count - 1 && !any)) {
      items.push_back(g.none());
      continue;
    }
    any = true;
    items.push_back(index_tensor(g, g.broadcastable_to(common), -size, size, 0.03));
  }
  std::vector<std::string> texts;
  for (const Arg& x : items) texts.push_back(x.text);
  std::string text = "[";
  for (size_t i = 0; i < texts.size(); ++i) text += (i ? ", " : "") + texts[i];
  return g.shared(Arg{[items](Device d) {
                        std::vector<std::optional<Tensor>> ts;
                        for (const Arg& x : items) {
                          IValue v = x.make(d);
                          ts.push_back(v.is_none() ? std::nullopt
                                                   : std::optional<Tensor>(v.to_tensor()));
                        }
                        return IValue(std::move(ts));
                      },
                      text + "]"});
}

// A zero tensor of the shape `f` gives on a device for the made arguments, or a 0-dim one when
// `f` raises (that call's error then shows in the operator's own).
Arg shaped_like(Gen& g, std::vector<Arg> from, std::function<Tensor(const std::vector<IValue>&)> f,
                ScalarType dtype, std::string text) {
  return g.derived(
      std::move(from),
      [f, dtype](const std::vector<IValue>& v) {
        Device device = v[0].to_tensor().device();
        try {
          return IValue(opd::zeros_like(f(v), TensorOptions().dtype(dtype)));
        } catch (const Error&) {
          return IValue(opd::zeros({}, TensorOptions().dtype(dtype).device(device)));
        }
      },
      std::move(text));
}

CaseFn index_put_case() {
  return [](Gen& g) {
    Shape s = g.shape(1, 3);
    ScalarType dt = g.dtype();
    Arg self = g.shared(g.tensor(s, dt));
    Arg indices = indices_arg(g, s);
    ScalarType vdt = g.chance(0.9) ? dt : g.dtype();
    Arg values = g.chance(0.5)
                     ? shaped_like(
                           g, {self, indices},
                           [](const std::vector<IValue>& v) {
                             return opd::index(v[0].to_tensor(), v[1].to_optional_tensor_list());
                           },
                           vdt, "zeros shaped as self[indices]")
                     : g.tensor(g.chance(0.7) ? Shape{} : g.shape(0, 2), vdt);
    return Case{{self, indices, values, g.value(IValue(g.chance(0.3)))}, {}};
  };
}

Case masked_fill_case(Gen& g, bool tensor_value) {
  Shape s = g.shape();
  Shape mask = g.chance(0.9) ? g.broadcastable_to(s) : g.shape();
  ScalarType dt = g.dtype();
  Arg value = tensor_value ? g.fitting_value_tensor(g.chance(0.9) ? Shape{} : Shape{2}, dt)
                           : fitting_scalar(g, dt);
  return Case{{g.tensor(s, dt), g.tensor(mask, g.chance(0.9) ? kBool : g.dtype()), value}, {}};
}

// Sizes that sum to `total` (now and then to one more).
Shape split_sizes(Gen& g, int64_t total) {
  Shape parts;
  for (int64_t rest = total; rest > 0;) {
    int64_t p = g.integer(0, rest);
    parts.push_back(p);
    rest -= p;
  }
  if (parts.empty() || g.chance(0.2)) parts.push_back(0);
  if (g.chance(0.05)) parts.back() += 1;
  return parts;
}

Case split_with_sizes_case(Gen& g) {
  Shape s = g.shape(g.chance(0.05) ? 0 : 1, 3);
  auto [d, dd] = pick_dim(g, s);
  return Case{
      {g.tensor(s, g.dtype()), g.int_list(split_sizes(g, size_at(s, dd))), g.value(IValue(d))}, {}};
}

Case repeat_case(Gen& g) {
  Shape s = g.shape();
  Shape reps(static_cast<size_t>(rank_of(s) + g.integer(0, 2)));
  for (int64_t& r : reps) r = g.integer(0, 3);
  if (!reps.empty() && g.chance(0.05)) reps.pop_back();
  return Case{{g.tensor(s, g.dtype()), g.int_list(reps)}, {}};
}

// A permutation of some of the dims of `rank`, each in [-rank, rank).
Shape some_dims(Gen& g, int64_t rank, int64_t count) {
  Shape all(static_cast<size_t>(rank));
  std::iota(all.begin(), all.end(), 0);
  for (size_t i = all.size(); i > 1; --i)
    std::swap(all[i - 1], all[static_cast<size_t>(g.integer(0, static_cast<int64_t>(i) - 1))]);
  all.resize(static_cast<size_t>(count));
  for (int64_t& d : all) d -= g.chance(0.3) ? rank : 0;
  return all;
}

Case movedim_case(Gen& g) {
  Shape s = g.shape();
  int64_t n = g.integer(0, rank_of(s));
  Shape src = some_dims(g, rank_of(s), n), dst = some_dims(g, rank_of(s), n);
  if (g.chance(0.05)) dst.push_back(0);
  return Case{{g.tensor(s, g.dtype()), g.int_list(src), g.int_list(dst)}, {}};
}

Case unflatten_case(Gen& g) {
  Shape s = g.shape(1, 3);
  auto [d, dd] = pick_dim(g, s);
  int64_t n = s[static_cast<size_t>(dd)];
  Shape sizes;
  if (n == 0) {
    sizes = {0, g.integer(1, 3)};
  } else {
    for (int64_t rest = n; rest > 1;) {
      int64_t f = 2;
      while (rest % f) ++f;
      sizes.push_back(f);
      rest /= f;
    }
    if (sizes.empty() || g.chance(0.3)) sizes.push_back(1);
    if (g.chance(0.2)) sizes[0] = -1;
  }
  if (g.chance(0.05)) sizes.push_back(2);
  return Case{{g.tensor(s, g.dtype()), g.value(IValue(d)), g.int_list(sizes)}, {}};
}

Case einsum_case(Gen& g) {
  int64_t i = g.integer(0, 3), j = g.integer(0, 3), k = g.integer(0, 3), b = g.integer(1, 2);
  ScalarType dt = g.chance(0.85) ? g.pick(std::vector<ScalarType>{kFloat, kDouble}) : g.dtype();
  auto wrong = [&](int64_t n) { return g.chance(0.05) ? n + 1 : n; };
  std::vector<std::pair<std::string, std::vector<Shape>>> forms = {
      {"ij,jk->ik", {{i, j}, {wrong(j), k}}},
      {"ii->i", {{i, wrong(i)}}},
      {"i,i->", {{i}, {wrong(i)}}},
      {"ij->ji", {{i, j}}},
      {"ij,kj", {{i, j}, {k, wrong(j)}}},
      {"bij,bjk->bik", {{b, i, j}, {b, wrong(j), k}}},
      {"...ij->...ji", {{b, i, j}}},
      {"i,j->ij", {{i}, {j}}},
      {"ij->", {{i, j}}},
      {"ij,jk->ik", {{i, j}}},  // too few operands
  };
  const auto& [eq, shapes] = g.pick(forms);
  std::vector<Arg> ts;
  for (const Shape& s : shapes) ts.push_back(g.tensor(s, g.chance(0.9) ? dt : g.dtype()));
  return Case{{g.value(IValue(eq)), g.tensor_list(std::move(ts))}, {}};
}

Case topk_case(Gen& g) {
  Shape s = g.shape();
  auto [d, dd] = pick_dim(g, s);
  int64_t size = size_at(s, dd);
  int64_t k = g.chance(0.05) ? size + 1 : g.integer(0, size);
  return Case{{g.tensor(s, g.dtype()), g.value(IValue(k)), g.value(IValue(d)),
               g.value(IValue(g.chance(0.5))), g.value(IValue(g.chance(0.7)))},
              {}};
}

// select_scatter / slice_scatter / diagonal_scatter: src shaped as the view of self it replaces
// (its view taken on the same device), now and then of another shape.
CaseFn view_scatter_case(int kind) {
  return [kind](Gen& g) {
    Shape s = g.shape(kind == 2 ? 2 : 1, 3);
    ScalarType dt = g.dtype();
    Arg self = g.shared(g.tensor(s, dt));
    auto [d, dd] = pick_dim(g, s);
    int64_t size = size_at(s, dd);
    std::vector<Arg> rest;
    std::function<Tensor(const std::vector<IValue>&)> view;
    if (kind == 0) {
      int64_t index = size == 0 ? 0 : g.integer(-size, size - 1);
      rest = {g.value(IValue(d)), g.value(IValue(index))};
      view = [d, index](const std::vector<IValue>& v) {
        return opd::select(v[0].to_tensor(), d, index);
      };
    } else if (kind == 1) {
      int64_t start = g.integer(0, size), end = g.integer(start, size), step = g.integer(1, 3);
      rest = {g.value(IValue(d)), g.value(IValue(start)), g.value(IValue(end)),
              g.value(IValue(step))};
      view = [=](const std::vector<IValue>& v) {
        return opd::slice(v[0].to_tensor(), d, start, end, step);
      };
    } else {
      int64_t offset = g.integer(-2, 2), d1 = g.integer(0, 1), d2 = 1 - d1;
      rest = {g.value(IValue(offset)), g.value(IValue(d1)), g.value(IValue(d2))};
      view = [=](const std::vector<IValue>& v) {
        return opd::diagonal(v[0].to_tensor(), offset, d1, d2);
      };
    }
    ScalarType sdt = g.chance(0.9) ? dt : g.dtype();
    Arg src = g.chance(0.9) ? shaped_like(g, {self}, view, sdt, "zeros shaped as the view")
                            : g.tensor(g.shape(), sdt);
    Case c{{self, src}, {}};
    c.args.insert(c.args.end(), rest.begin(), rest.end());
    return c;
  };
}

Case index_fill_case(Gen& g) {
  Shape s = g.shape();
  ScalarType dt = g.dtype();
  auto [d, dd] = pick_dim(g, s);
  Shape is = g.chance(0.85) ? Shape{g.integer(0, 3)} : g.chance(0.7) ? Shape{} : Shape{2, 2};
  return Case{{g.tensor(s, dt), g.value(IValue(d)),
               index_tensor(g, is, -size_at(s, dd), size_at(s, dd)), fitting_scalar(g, dt)},
              {}};
}

// cumsum / cumprod: any input; a Bool result (dtype=bool, a Bool out, a Bool self in place) is
// left out: CPU has no Bool kernel and refuses it where Meta cannot know (as in PyTorch).
Case scan_case(Gen& g, bool in_place) {
  Shape s = g.shape();
  ScalarType dt = g.dtype();
  if (in_place && dt == kBool) dt = kLong;
  Case c{{g.tensor(s, dt), g.dim(rank_of(s))}, {}};
  if (!in_place && g.chance(0.5)) {
    ScalarType r = g.dtype();
    c.named["dtype"] = g.value(IValue(r == kBool ? kDouble : r));
  }
  return c;
}
Case scan_out_case(Gen& g) {
  Case c = scan_case(g, false);
  ScalarType r = g.dtype();
  c.named["out"] = g.tensor(g.chance(0.7) ? Shape{0} : g.shape(), r == kBool ? kLong : r);
  return c;
}

// Products of vectors and matrices: mostly one floating dtype, inner sizes mostly matching.
ScalarType mat_dtype(Gen& g) {
  return g.chance(0.85) ? g.pick(std::vector<ScalarType>{kFloat, kDouble}) : g.dtype();
}
int64_t near(Gen& g, int64_t n) { return g.chance(0.9) ? n : n + 1; }

void add_products(std::map<std::string, CaseFn>& m) {
  m["dot"] = m["vdot"] = [](Gen& g) {
    int64_t n = g.integer(0, 4);
    ScalarType dt = mat_dtype(g);
    Shape a = g.chance(0.9) ? Shape{n} : g.shape();
    return Case{{g.tensor(a, dt), g.tensor({near(g, n)}, g.chance(0.9) ? dt : g.dtype())}, {}};
  };
  m["mv"] = [](Gen& g) {
    int64_t r = g.integer(0, 4), k = g.integer(0, 4);
    ScalarType dt = mat_dtype(g);
    return Case{{g.tensor(g.chance(0.9) ? Shape{r, k} : Shape{k}, dt), g.tensor({near(g, k)}, dt)},
                {}};
  };
  m["outer"] = m["ger"] = [](Gen& g) {
    ScalarType dt = mat_dtype(g);
    Shape a = g.chance(0.9) ? Shape{g.integer(0, 4)} : g.shape();
    return Case{{g.tensor(a, dt), g.tensor({g.integer(0, 4)}, g.chance(0.9) ? dt : g.dtype())}, {}};
  };
  m["addmv"] = [](Gen& g) {
    int64_t r = g.integer(0, 4), k = g.integer(0, 4);
    ScalarType dt = mat_dtype(g);
    Shape self = g.pick(std::vector<Shape>{{r}, {r}, {1}, {}, {r + 1}});
    return Case{{g.tensor(self, dt), g.tensor({r, k}, dt), g.tensor({near(g, k)}, dt)},
                {{"beta", g.scalar()}, {"alpha", g.scalar()}}};
  };
  m["addr"] = [](Gen& g) {
    int64_t r = g.integer(0, 4), k = g.integer(0, 4);
    ScalarType dt = mat_dtype(g);
    Shape self = g.pick(std::vector<Shape>{{r, k}, {r, k}, {k}, {1, k}, {}, {r + 1, k}});
    return Case{{g.tensor(self, dt), g.tensor({r}, dt), g.tensor({k}, dt)},
                {{"beta", g.scalar()}, {"alpha", g.scalar()}}};
  };
  m["baddbmm"] = [](Gen& g) {
    int64_t b = g.integer(0, 3), r = g.integer(0, 3), k = g.integer(0, 3), n = g.integer(0, 3);
    ScalarType dt = mat_dtype(g);
    Shape self =
        g.pick(std::vector<Shape>{{b, r, n}, {b, r, n}, {n}, {1, r, 1}, {}, {b + 1, r, n}});
    return Case{{g.tensor(self, dt), g.tensor({b, r, k}, dt), g.tensor({b, near(g, k), n}, dt)},
                {{"beta", g.scalar()}, {"alpha", g.scalar()}}};
  };
  m["tensordot"] = [](Gen& g) {
    Shape a = g.shape(0, 3), b = g.shape(0, 3);
    int64_t n = g.integer(0, std::min(rank_of(a), rank_of(b)));
    Shape da = some_dims(g, rank_of(a), n), db = some_dims(g, rank_of(b), n);
    for (int64_t i = 0; i < n; ++i) {  // contracted sizes match (mostly)
      int64_t x = da[static_cast<size_t>(i)] < 0 ? da[static_cast<size_t>(i)] + rank_of(a)
                                                 : da[static_cast<size_t>(i)];
      int64_t y = db[static_cast<size_t>(i)] < 0 ? db[static_cast<size_t>(i)] + rank_of(b)
                                                 : db[static_cast<size_t>(i)];
      b[static_cast<size_t>(y)] = near(g, a[static_cast<size_t>(x)]);
    }
    ScalarType dt = mat_dtype(g);
    return Case{{g.tensor(a, dt), g.tensor(b, dt), g.int_list(da), g.int_list(db)}, {}};
  };
  // Distances between rows: x1 [..., r1, c], x2 [..., r2, c].
  auto rows = [](Gen& g, int64_t& r1, int64_t& r2, ScalarType& dt) {
    Shape batch = g.chance(0.7) ? Shape{} : Shape{g.integer(1, 2)};
    int64_t c = g.integer(0, 3);
    r1 = g.integer(0, 3);
    r2 = g.integer(0, 3);
    dt = mat_dtype(g);
    Shape a = batch, b = batch;
    a.insert(a.end(), {r1, c});
    b.insert(b.end(), {r2, near(g, c)});
    return std::pair{g.tensor(a, dt), g.tensor(b, dt)};
  };
  auto p_arg = [](Gen& g) {
    return g.value(IValue(g.pick(std::vector<double>{2.0, 1.0, 0.0, 3.5, -1.0})));
  };
  m["_euclidean_dist"] = [=](Gen& g) {
    int64_t r1, r2;
    ScalarType dt;
    auto [a, b] = rows(g, r1, r2, dt);
    return Case{{a, b}, {}};
  };
  m["cdist"] = m["_cdist_forward"] = [=](Gen& g) {
    int64_t r1, r2;
    ScalarType dt;
    auto [a, b] = rows(g, r1, r2, dt);
    return Case{{a, b, p_arg(g), g.chance(0.5) ? g.none() : g.value(IValue(g.integer(0, 2)))}, {}};
  };
  m["_cdist_backward"] = [=](Gen& g) {
    int64_t r1, r2;
    ScalarType dt;
    auto [a, b] = rows(g, r1, r2, dt);
    Shape out = {r1, r2};
    if (g.chance(0.05)) out[0] += 1;
    return Case{{g.tensor(out, dt), a, b, p_arg(g), g.tensor(out, dt)}, {}};
  };
  m["pdist"] = [=](Gen& g) {
    Shape s = g.chance(0.9) ? Shape{g.integer(0, 4), g.integer(0, 3)} : g.shape();
    return Case{{g.tensor(s, mat_dtype(g)), p_arg(g)}, {}};
  };
}

}  // namespace

void add_index_cases(std::map<std::string, CaseFn>& m) {
  m["gather"] = gather_case;
  m["gather.out"] = out_form(gather_case);
  m["take_along_dim"] = take_along_dim_case;
  const std::vector<std::string> two = {"add", "multiply", "add", "multiply", "bad"};
  const std::vector<std::string> five = {"sum", "prod", "mean", "amax", "amin", "bad"};
  const std::map<std::string, CaseFn> scatters = {
      {"scatter.src", scatter_case(true, {}, false)},
      {"scatter.value", scatter_case(false, {}, false)},
      {"scatter.reduce", scatter_case(true, two, false)},
      {"scatter.value_reduce", scatter_case(false, two, false)},
      {"scatter_add", scatter_case(true, {}, false)},
      {"scatter_reduce.two", scatter_case(true, five, true)},
  };
  for (const auto& [name, fn] : scatters) {
    size_t dot = name.find('.');
    std::string base = name.substr(0, dot),
                overload = dot == std::string::npos ? "" : name.substr(dot);
    m[name] = fn;
    m[base + "_" + overload] = fn;
    m[overload.empty() ? base + ".out" : name + "_out"] = out_form(fn);
  }
  m["index_select"] = index_select_case;
  m["index_select.out"] = out_form(index_select_case);
  m["index_add"] = m["index_add_"] = index_add_case;
  m["index_add.out"] = out_form(index_add_case);
  m["index.Tensor"] = [](Gen& g) {
    Shape s = g.shape(1, 3);
    return Case{{g.tensor(s, g.dtype()), indices_arg(g, s)}, {}};
  };
  m["index_put_"] = m["index_put"] = index_put_case();
  m["masked_fill.Scalar"] =
      m["masked_fill_.Scalar"] = [](Gen& g) { return masked_fill_case(g, false); };
  m["masked_fill.Tensor"] =
      m["masked_fill_.Tensor"] = [](Gen& g) { return masked_fill_case(g, true); };
  m["split_with_sizes"] = m["split.sizes"] = split_with_sizes_case;
  m["repeat"] = repeat_case;
  m["movedim.intlist"] = m["moveaxis.intlist"] = movedim_case;
  m["unflatten.int"] = unflatten_case;
  m["einsum"] = einsum_case;
  m["topk"] = topk_case;
  m["index_fill.int_Scalar"] = m["index_fill_.int_Scalar"] = index_fill_case;
  for (const std::string name : {"cumsum", "cumprod"}) {
    m[name] = [](Gen& g) { return scan_case(g, false); };
    m[name + "_"] = [](Gen& g) { return scan_case(g, true); };
    m[name + ".out"] = scan_out_case;
  }
  add_products(m);
  m["select_scatter"] = view_scatter_case(0);
  m["slice_scatter"] = view_scatter_case(1);
  m["diagonal_scatter"] = view_scatter_case(2);
}

}  // namespace opd::test::meta_vs_cpu
