// Argument builders of the Meta-vs-CPU property test; see meta_vs_cpu_gen.h.

#include "meta_vs_cpu_gen.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

namespace opd::test::meta_vs_cpu {
namespace {

template <class T>
void write_values(const Tensor& t, const std::vector<double>& values) {
  T* p = t.data_ptr<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(values[i]);
}

}  // namespace

Tensor TensorRecipe::make(Device device) const {
  Tensor t = opd::empty(base, TensorOptions().dtype(dtype).device(device));
  if (device.is_cpu()) {
    switch (dtype) {
      case kBool:
        write_values<bool>(t, values);
        break;
      case kByte:
        write_values<uint8_t>(t, values);
        break;
      case kInt:
        write_values<int32_t>(t, values);
        break;
      case kLong:
        write_values<int64_t>(t, values);
        break;
      case kFloat:
        write_values<float>(t, values);
        break;
      case kDouble:
        write_values<double>(t, values);
        break;
      default:
        OPD_CHECK(false, "meta_vs_cpu: no values for dtype {}", dtype);
    }
  }
  switch (layout) {
    case Layout_::Contiguous:
      break;
    case Layout_::Transposed:
      t = t.transpose(-1, -2);
      break;
    case Layout_::Sliced:
      t = t.slice(slice_dim, 1, 1 + 2 * sizes[slice_dim], 2);
      break;
    case Layout_::Expanded:
      t = t.expand(sizes);
      break;
  }
  if (requires_grad) t.requires_grad_(true);
  return t;
}

std::string TensorRecipe::text() const {
  std::string s = fmt::format("{}{}", dtype, sizes);
  switch (layout) {
    case Layout_::Contiguous:
      break;
    case Layout_::Transposed:
      s += " transposed";
      break;
    case Layout_::Sliced:
      s += fmt::format(" sliced (dim {} of {}, step 2)", slice_dim, base);
      break;
    case Layout_::Expanded:
      s += fmt::format(" expanded from {}", base);
      break;
  }
  return requires_grad ? s + " requires_grad" : s;
}

int64_t Gen::integer(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}
double Gen::real(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng_);
}
bool Gen::chance(double p) { return real(0, 1) < p; }

ScalarType Gen::dtype() {
  return pick(std::vector<ScalarType>{kBool, kByte, kInt, kLong, kFloat, kDouble});
}
ScalarType Gen::float_dtype() {
  return chance(0.85) ? pick(std::vector<ScalarType>{kFloat, kDouble}) : dtype();
}

std::vector<int64_t> Gen::shape(int min_rank, int max_rank) {
  std::vector<int64_t> s(static_cast<size_t>(integer(min_rank, max_rank)));
  for (int64_t& d : s) {
    int64_t r = integer(0, 9);
    d = r == 0 ? 0 : r <= 3 ? 1 : integer(2, 4);
  }
  return s;
}

std::vector<int64_t> Gen::broadcastable_to(const std::vector<int64_t>& target) {
  size_t keep = static_cast<size_t>(integer(0, static_cast<int64_t>(target.size())));
  std::vector<int64_t> s(target.end() - keep, target.end());
  for (int64_t& d : s) {
    if (chance(0.3)) d = 1;
  }
  if (!s.empty() && chance(0.07)) {
    int64_t& d = s[static_cast<size_t>(integer(0, static_cast<int64_t>(s.size()) - 1))];
    d = d + 2;  // never 1, never the target's size: does not broadcast
  }
  return s;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> Gen::broadcast_pair() {
  std::vector<int64_t> full = shape(0, 3);
  return {broadcastable_to(full), broadcastable_to(full)};
}

TensorRecipe Gen::recipe(std::vector<int64_t> sizes, ScalarType dtype) {
  TensorRecipe r;
  r.sizes = sizes;
  r.dtype = dtype;
  r.base = sizes;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  int64_t kind = integer(0, 9);
  if (kind >= 4 && kind <= 5 && rank >= 2) {
    r.layout = Layout_::Transposed;
    std::swap(r.base[rank - 1], r.base[rank - 2]);
  } else if (kind >= 6 && kind <= 7 && rank >= 1) {
    r.layout = Layout_::Sliced;
    r.slice_dim = integer(0, rank - 1);
    r.base[r.slice_dim] = 2 * sizes[r.slice_dim] + 1;
  } else if (kind >= 8 && rank >= 1) {
    for (int64_t& d : r.base) {
      if (chance(0.5)) d = 1;
    }
    if (r.base != sizes) r.layout = Layout_::Expanded;
  }
  r.values.resize(static_cast<size_t>(numel_of(r.base)));
  for (double& v : r.values) {
    switch (dtype) {
      case kBool:
        v = static_cast<double>(integer(0, 1));
        break;
      case kByte:
        v = static_cast<double>(integer(0, 9));
        break;
      case kInt:
      case kLong:
        v = static_cast<double>(integer(-3, 9));
        break;
      default:
        v = real(-3, 3);
    }
  }
  return r;
}

Arg Gen::tensor(const TensorRecipe& r) {
  return {[r](Device d) { return IValue(r.make(d)); }, r.text()};
}

Arg Gen::fitting_value_tensor(std::vector<int64_t> sizes, ScalarType target) {
  TensorRecipe r = recipe(std::move(sizes), dtype());
  if (target == kByte && r.dtype != kBool) {
    for (double& v : r.values) v = static_cast<double>(integer(0, 5));
  }
  return tensor(r);
}

Arg Gen::grad_tensor(std::vector<int64_t> sizes) {
  TensorRecipe r = recipe(std::move(sizes), pick(std::vector<ScalarType>{kFloat, kDouble}));
  r.layout = Layout_::Contiguous;  // a leaf: requires_grad_ on the allocated tensor itself
  r.base = r.sizes;
  r.values.assign(static_cast<size_t>(numel_of(r.base)), 0.5);
  r.requires_grad = autograd_ && chance(0.5);
  return tensor(r);
}

Arg Gen::target(std::vector<int64_t> sizes, int64_t classes, int64_t ignore_index) {
  // With no classes every target is ignore_index, which uint8 cannot hold (-100 reads 156: an
  // out-of-bounds target that only CPU, reading the data, can see): no Byte target then.
  ScalarType dt = chance(0.9)    ? kLong
                  : classes == 0 ? pick(std::vector<ScalarType>{kInt, kFloat})
                                 : pick(std::vector<ScalarType>{kInt, kByte, kFloat});
  TensorRecipe r = recipe(std::move(sizes), dt);
  for (double& v : r.values) {
    bool ignore = classes == 0 || (dt != kByte && chance(0.15));
    v = static_cast<double>(ignore ? ignore_index : integer(0, classes - 1));
  }
  return tensor(r);
}

Arg Gen::tensor_list(std::vector<Arg> items) {
  std::vector<std::string> texts;
  for (const Arg& a : items) texts.push_back(a.text);
  return {[items](Device d) {
            std::vector<Tensor> ts;
            for (const Arg& a : items) ts.push_back(a.make(d).to_tensor());
            return IValue(std::move(ts));
          },
          fmt::format("[{}]", fmt::join(texts, ", "))};
}

Arg Gen::shared(Arg a) {
  auto made = std::make_shared<std::map<DeviceType, IValue>>();
  auto make = a.make;
  return {[made, make](Device d) {
            auto it = made->find(d.type);
            if (it == made->end()) it = made->emplace(d.type, make(d)).first;
            return it->second;
          },
          a.text};
}

Arg Gen::derived(std::vector<Arg> from, std::function<IValue(const std::vector<IValue>&)> f,
                 std::string text) {
  return {[from, f](Device d) {
            std::vector<IValue> xs;
            for (const Arg& a : from) xs.push_back(a.make(d));
            return f(xs);
          },
          std::move(text)};
}

Arg Gen::none() {
  return {[](Device) { return IValue(); }, "None"};
}

Arg Gen::value(IValue v) {
  std::string text = v.repr();
  return {[v](Device) { return v; }, text};
}

Arg Gen::scalar() {
  int64_t kind = integer(0, 19);
  if (kind < 9) return value(IValue(integer(-3, 5)));
  if (kind < 17) return value(IValue(static_cast<double>(integer(-10, 10)) / 4));
  return value(IValue(chance(0.5)));
}

Arg Gen::dim(int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (chance(0.08)) return value(IValue(chance(0.5) ? r : -r - 1));
  return value(IValue(integer(-r, r - 1)));
}

Arg Gen::dims(int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  std::vector<int64_t> ds(static_cast<size_t>(integer(0, r)));
  for (int64_t& d : ds) d = chance(0.04) ? r : integer(-r, r - 1);
  return value(IValue(std::move(ds)));
}

Arg Gen::optional_dtype() { return chance(0.5) ? none() : value(IValue(dtype())); }

Arg Gen::device(bool optional) {
  bool as_none = optional && chance(0.5);
  return {[as_none](Device d) {
            return d.is_meta() ? IValue(d) : as_none ? IValue() : IValue(Device(kCPU));
          },
          as_none ? "None (meta on Meta)" : "cpu (meta on Meta)"};
}

Arg Gen::memory_format(bool optional) {
  if (chance(0.05)) return value(IValue(MemoryFormat::ChannelsLast));
  if (optional && chance(0.5)) return none();
  return value(IValue(chance(0.6) ? MemoryFormat::Contiguous : MemoryFormat::Preserve));
}

void Gen::factory_options(Case& c) {
  c.named["dtype"] = optional_dtype();
  c.named["layout"] = chance(0.2) ? value(IValue(Layout::Strided)) : none();
  c.named["device"] = device(true);
  c.named["pin_memory"] = chance(0.2) ? value(IValue(false)) : none();
}

}  // namespace opd::test::meta_vs_cpu
