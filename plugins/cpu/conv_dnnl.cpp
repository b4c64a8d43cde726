// Convolution through oneDNN (float and bfloat16), PyTorch's mkldnn path: see Note
// [Convolution on the CPU] in conv_kernels.cpp.
//
// Note [oneDNN primitive cache]
// Making a oneDNN primitive chooses and JIT-compiles a kernel (tens to hundreds of
// microseconds), so the primitives are kept, keyed by everything their choice depends on: the
// computation, dtype, sizes, whether the activations are channels-last, the convolution's
// parameters. The cache is bounded (it is emptied when it holds kMaxPrimitives) and guarded by a
// mutex held only to look up or insert; a primitive runs outside it, concurrently on several
// threads, which oneDNN allows since each execution is given its own scratchpad
// (scratchpad_mode::user). The primitive's layouts are oneDNN's choice (format `any`) for the
// weights, and for contiguous activations (blocked layouts, as ideep asks for them); channels-last
// activations are given as they are (oneDNN's nhwc kernels take them without a reorder). Data
// in another layout than the primitive's is reordered before and after.

#include <cstring>
#include <dnnl.hpp>
#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "common/conv_shape.h"
#include "cpu/conv_backend.h"

namespace opd::native::conv {
namespace {

using dnnl::memory;
using Dims = memory::dims;
constexpr size_t kMaxPrimitives = 256;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::data_type dnnl_type(ScalarType t) {
  return t == kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
}

// The tensor's own layout, as a oneDNN descriptor; weights viewed as (G, O/G, I/G, *).
memory::desc user_desc(const Tensor& t, int64_t groups = 1) {
  Dims dims(t.sizes().begin(), t.sizes().end());
  Dims strides(t.strides().begin(), t.strides().end());
  if (groups > 1) {
    dims[0] /= groups;
    dims.insert(dims.begin(), groups);
    strides.insert(strides.begin(), strides[0] * dims[1]);
  }
  return memory::desc(dims, dnnl_type(t.scalar_type()), strides);
}

memory::desc any_desc(const std::vector<int64_t>& sizes, ScalarType t, int64_t groups = 1) {
  Dims dims(sizes.begin(), sizes.end());
  if (groups > 1) {
    dims[0] /= groups;
    dims.insert(dims.begin(), groups);
  }
  return memory::desc(dims, dnnl_type(t), memory::format_tag::any);
}

Dims dnnl_dilation(const Geometry& g) {
  Dims d;
  for (int64_t v : g.dilation) d.push_back(v - 1);
  return d;
}

enum Kind : int64_t { kForward, kBackwardData, kBackwardWeights };

struct Entry {
  dnnl::primitive primitive;
  memory::desc src, weight, dst, scratchpad;  // the primitive's layouts
};

struct Key {
  std::vector<int64_t> v;
  bool operator==(const Key& o) const { return v == o.v; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t x : k.v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
    return h;
  }
};

class PrimitiveCache {
 public:
  template <class Make>
  std::shared_ptr<const Entry> get(const Key& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    auto entry = std::make_shared<const Entry>(make());
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxPrimitives) map_.clear();
    map_.emplace(key, entry);
    return entry;
  }

 private:
  std::mutex mu_;
  std::unordered_map<Key, std::shared_ptr<const Entry>, KeyHash> map_;
};

PrimitiveCache& cache() {
  static PrimitiveCache* c = new PrimitiveCache();  // never destroyed: used until unload
  return *c;
}

Key make_key(Kind kind, ScalarType dtype, bool channels_last, bool bias, const Geometry& g) {
  Key k;
  k.v = {kind, static_cast<int64_t>(dtype), channels_last, bias, g.groups};
  for (const auto* list : {&g.src, &g.weight, &g.dst, &g.stride, &g.pad_l, &g.pad_r, &g.dilation}) {
    k.v.push_back(static_cast<int64_t>(list->size()));
    k.v.insert(k.v.end(), list->begin(), list->end());
  }
  return k;
}

// The activations' descriptor for the primitive: theirs when channels-last, else `any`.
memory::desc act_desc(const Tensor& t, const std::vector<int64_t>& sizes, bool channels_last) {
  return channels_last ? user_desc(t) : any_desc(sizes, t.scalar_type());
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

bool channels_last(const Tensor& t) {
  return t.dim() >= 4 && !t.is_contiguous() && common::suggests_channels_last(t);
}

dnnl::convolution_forward::primitive_desc forward_pd(const memory::desc& src,
                                                     const memory::desc& weight,
                                                     const memory::desc& bias,
                                                     const memory::desc& dst, const Geometry& g) {
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src, weight, bias,
      dst, Dims(g.stride.begin(), g.stride.end()), dnnl_dilation(g),
      Dims(g.pad_l.begin(), g.pad_l.end()), Dims(g.pad_r.begin(), g.pad_r.end()));
  return dnnl::convolution_forward::primitive_desc(d, user_scratchpad(), engine());
}

// One argument of a primitive: the tensor's memory, and the primitive's when it differs.
struct Arg {
  memory user, prim;
  bool reordered() const { return user.get() != prim.get(); }
};

Arg prepare(const Tensor& t, const memory::desc& want, int64_t groups, dnnl::stream& s,
            bool input) {
  const memory::desc ud = user_desc(t, groups);
  memory um(ud, engine(), t.data_ptr());
  if (ud == want) return {um, um};
  memory pm(want, engine());
  if (input) dnnl::reorder(um, pm).execute(s, um, pm);
  return {um, pm};
}

void finish(Arg out, dnnl::stream& s) {
  if (out.reordered()) dnnl::reorder(out.prim, out.user).execute(s, out.prim, out.user);
}

// The cached primitive, or null where oneDNN has no implementation (also cached).
template <class Make>
std::shared_ptr<const Entry> lookup(const Key& key, Make make) {
  auto e = cache().get(key, [&]() -> Entry {
    try {
      return make();
    } catch (const dnnl::error&) {
      return Entry{};
    }
  });
  return e->primitive ? e : nullptr;
}

}  // namespace

bool dnnl_supports(const Geometry& g) {
  for (int64_t v : g.pad_r) {
    if (v < 0) return false;
  }
  return true;
}

bool dnnl_forward(const Tensor& src, const Tensor& weight, const Tensor* bias, const Tensor& dst,
                  const Geometry& g) {
  const bool cl = channels_last(src);
  const ScalarType dt = src.scalar_type();
  const memory::desc bias_md =
      bias ? memory::desc({g.dst[1]}, dnnl_type(bias->scalar_type()), memory::format_tag::a)
           : memory::desc();
  auto e = lookup(make_key(kForward, dt, cl, bias != nullptr, g), [&] {
    auto pd = forward_pd(act_desc(src, g.src, cl), any_desc(g.weight, dt, g.groups), bias_md,
                         act_desc(dst, g.dst, cl), g);
    return Entry{dnnl::convolution_forward(pd), pd.src_desc(), pd.weights_desc(), pd.dst_desc(),
                 pd.scratchpad_desc()};
  });
  if (!e) return false;
  dnnl::stream s(engine());
  Arg a_src = prepare(src, e->src, 1, s, true);
  Arg a_w = prepare(weight, e->weight, g.groups, s, true);
  Arg a_dst = prepare(dst, e->dst, 1, s, false);
  memory scratch(e->scratchpad, engine());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_src.prim},
                                       {DNNL_ARG_WEIGHTS, a_w.prim},
                                       {DNNL_ARG_DST, a_dst.prim},
                                       {DNNL_ARG_SCRATCHPAD, scratch}};
  if (bias) args.emplace(DNNL_ARG_BIAS, memory(bias_md, engine(), bias->data_ptr()));
  e->primitive.execute(s, args);
  finish(a_dst, s);
  s.wait();
  return true;
}

bool dnnl_backward_data(const Tensor& diff_dst, const Tensor& weight, const Tensor& diff_src,
                        const Geometry& g) {
  const bool cl = channels_last(diff_dst);
  const ScalarType dt = diff_dst.scalar_type();
  auto e = lookup(make_key(kBackwardData, dt, cl, false, g), [&] {
    const memory::desc src = act_desc(diff_src, g.src, cl), dst = act_desc(diff_dst, g.dst, cl);
    const memory::desc w = any_desc(g.weight, dt, g.groups);
    auto fwd = forward_pd(src, w, memory::desc(), dst, g);
    dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, src, w, dst,
                                            Dims(g.stride.begin(), g.stride.end()),
                                            dnnl_dilation(g), Dims(g.pad_l.begin(), g.pad_l.end()),
                                            Dims(g.pad_r.begin(), g.pad_r.end()));
    dnnl::convolution_backward_data::primitive_desc pd(d, user_scratchpad(), engine(), fwd);
    return Entry{dnnl::convolution_backward_data(pd), pd.diff_src_desc(), pd.weights_desc(),
                 pd.diff_dst_desc(), pd.scratchpad_desc()};
  });
  if (!e) return false;
  dnnl::stream s(engine());
  Arg a_dst = prepare(diff_dst, e->dst, 1, s, true);
  Arg a_w = prepare(weight, e->weight, g.groups, s, true);
  Arg a_src = prepare(diff_src, e->src, 1, s, false);
  memory scratch(e->scratchpad, engine());
  e->primitive.execute(s, {{DNNL_ARG_DIFF_DST, a_dst.prim},
                           {DNNL_ARG_WEIGHTS, a_w.prim},
                           {DNNL_ARG_DIFF_SRC, a_src.prim},
                           {DNNL_ARG_SCRATCHPAD, scratch}});
  finish(a_src, s);
  s.wait();
  return true;
}

bool dnnl_backward_weights(const Tensor& src, const Tensor& diff_dst, const Tensor& diff_weight,
                           const Tensor* diff_bias, const Geometry& g) {
  const bool cl = channels_last(src);
  const ScalarType dt = src.scalar_type();
  const memory::desc bias_md =
      diff_bias
          ? memory::desc({g.dst[1]}, dnnl_type(diff_bias->scalar_type()), memory::format_tag::a)
          : memory::desc();
  auto e = lookup(make_key(kBackwardWeights, dt, cl, diff_bias != nullptr, g), [&] {
    const memory::desc s_md = act_desc(src, g.src, cl), d_md = act_desc(diff_dst, g.dst, cl);
    const memory::desc w = any_desc(g.weight, dt, g.groups);
    auto fwd = forward_pd(s_md, w, bias_md, d_md, g);
    dnnl::convolution_backward_weights::desc d(
        dnnl::algorithm::convolution_direct, s_md, w, bias_md, d_md,
        Dims(g.stride.begin(), g.stride.end()), dnnl_dilation(g),
        Dims(g.pad_l.begin(), g.pad_l.end()), Dims(g.pad_r.begin(), g.pad_r.end()));
    dnnl::convolution_backward_weights::primitive_desc pd(d, user_scratchpad(), engine(), fwd);
    return Entry{dnnl::convolution_backward_weights(pd), pd.src_desc(), pd.diff_weights_desc(),
                 pd.diff_dst_desc(), pd.scratchpad_desc()};
  });
  if (!e) return false;
  dnnl::stream s(engine());
  Arg a_src = prepare(src, e->src, 1, s, true);
  Arg a_dst = prepare(diff_dst, e->dst, 1, s, true);
  Arg a_w = prepare(diff_weight, e->weight, g.groups, s, false);
  memory scratch(e->scratchpad, engine());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_src.prim},
                                       {DNNL_ARG_DIFF_DST, a_dst.prim},
                                       {DNNL_ARG_DIFF_WEIGHTS, a_w.prim},
                                       {DNNL_ARG_SCRATCHPAD, scratch}};
  if (diff_bias) {
    args.emplace(DNNL_ARG_DIFF_BIAS, memory(bias_md, engine(), diff_bias->data_ptr()));
  }
  e->primitive.execute(s, args);
  finish(a_w, s);
  s.wait();
  return true;
}

}  // namespace opd::native::conv
