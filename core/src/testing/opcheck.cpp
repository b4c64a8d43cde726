// opd::testing::opcheck: torch 2.4's torch.library.opcheck over a boxed call. The checks, their
// texts and their choices are those of python/opdispatch/_opcheck.py (read its docstrings for why
// each differs from torch where it does); what is new here is Note [Written results are the
// arguments].

#include "opd/testing/opcheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "opd/autograd.h"
#include "opd/dispatcher.h"
#include "opd/function_schema.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/ops.h"

namespace opd::testing {

OpCheckError::~OpCheckError() = default;
MetadataMismatchError::~MetadataMismatchError() = default;

namespace {

constexpr std::string_view kTestUtils[] = {"test_schema", "test_autograd_registration",
                                           "test_faketensor"};

// ---- the tensors of a stack ----------------------------------------------------------------

// The tensors a value holds, in order: a Tensor, the elements of Tensor[] and Tensor?[], and of
// generic lists and tuples (nested). Other values hold none.
void collect(const IValue& v, std::vector<Tensor>& out) {
  if (v.is_tensor()) {
    if (v.to_tensor().defined()) out.push_back(v.to_tensor());
  } else if (v.is_tensor_list()) {
    for (const Tensor& t : v.to_tensor_list()) out.push_back(t);
  } else if (v.is_optional_tensor_list()) {
    for (const auto& t : v.to_optional_tensor_list()) {
      if (t && t->defined()) out.push_back(*t);
    }
  } else if (v.is_generic_list() || v.is_tuple()) {
    for (const IValue& e : v.is_tuple() ? v.to_tuple() : v.to_generic_list()) collect(e, out);
  }
}

std::vector<Tensor> leaves(const IValue& v) {
  std::vector<Tensor> out;
  collect(v, out);
  return out;
}

std::vector<Tensor> leaves(const Stack& s) {
  std::vector<Tensor> out;
  for (const IValue& v : s) collect(v, out);
  return out;
}

// `v` with each tensor replaced by fn(tensor). Generic lists and tuples are rebuilt element by
// element (the schemas here hold no tensors in them; they are kept for completeness).
IValue map_tensors(const IValue& v, const std::function<Tensor(const Tensor&)>& fn) {
  if (v.is_tensor()) return v.to_tensor().defined() ? IValue(fn(v.to_tensor())) : v;
  if (v.is_tensor_list()) {
    std::vector<Tensor> ts;
    for (const Tensor& t : v.to_tensor_list()) ts.push_back(fn(t));
    return IValue(std::move(ts));
  }
  if (v.is_optional_tensor_list()) {
    std::vector<std::optional<Tensor>> ts;
    for (const auto& t : v.to_optional_tensor_list()) {
      ts.push_back(t && t->defined() ? std::optional<Tensor>(fn(*t)) : t);
    }
    return IValue(std::move(ts));
  }
  if (v.is_generic_list()) {
    std::vector<IValue> items;
    for (const IValue& e : v.to_generic_list()) items.push_back(map_tensors(e, fn));
    return IValue::make_generic_list(std::move(items));
  }
  return v;
}

Stack map_tensors(const Stack& s, const std::function<Tensor(const Tensor&)>& fn) {
  Stack out;
  out.reserve(s.size());
  for (const IValue& v : s) out.push_back(map_tensors(v, fn));
  return out;
}

// requires_grad and is_leaf without the autograd plugin's help for a tensor that has no autograd
// state (it cannot require grad), so that the checks run whether or not the plugin is loaded.
bool requires_grad(const Tensor& t) { return detail::has_autograd_state(t) && t.requires_grad(); }
bool is_grad_leaf(const Tensor& t) { return !detail::has_autograd_state(t) || t.is_leaf(); }

bool any_meta(const Stack& s) {
  const std::vector<Tensor> ts = leaves(s);
  return std::any_of(ts.begin(), ts.end(), [](const Tensor& t) { return t.is_meta(); });
}

// Elements of storage `t` reaches past its offset (0 for an empty tensor).
int64_t extent(const Tensor& t) {
  if (t.numel() == 0) return 0;
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d) n += (t.sizes()[d] - 1) * t.strides()[d];
  return n;
}

// A copy of `t` with its strides, as torch's clone_input: its own storage with 32 elements to
// spare (an as_strided_ sample may reach past the tensor), and a leaf that requires grad when
// `t` is a leaf that does.
Tensor clone_input(const Tensor& t) {
  Tensor copy;
  {
    NoGradGuard no_grad;
    try {
      copy = empty({extent(t) + 32}, TensorOptions().dtype(t.dtype()).device(t.device()));
      copy.as_strided_(t.sizes(), t.strides(), 0);
      copy.copy_(t);
    } catch (const Error&) {  // overlapping strides: the copy cannot be written in place
      copy = t.clone();
    }
  }
  if (requires_grad(t) && is_grad_leaf(t)) copy.requires_grad_(true);
  return copy;
}

Stack copy_inputs(const Stack& s) { return map_tensors(s, clone_input); }

// ---- the schema's alias annotations --------------------------------------------------------

// One argument's or return's annotation: its alias sets (a list's elements' included), whether it
// is written, whether it names the wildcard set.
struct Alias {
  std::set<std::string> sets;
  bool write = false;
  bool wildcard = false;

  explicit Alias(const Argument& a) {
    if (const AliasInfo* info = a.alias_info()) add(*info);
  }
  void add(const AliasInfo& info) {
    for (const auto* names : {&info.before_set, &info.after_set}) {
      for (const std::string& n : *names) {
        if (n == AliasInfo::kWildcard) {
          wildcard = true;
        } else {
          sets.insert(n);
        }
      }
    }
    write = write || info.is_write;
    for (const AliasInfo& c : info.contained) add(c);
  }
  // Whether the annotations name a common alias set (not merely a wildcard).
  bool declares_alias(const Alias& o) const {
    return std::any_of(sets.begin(), sets.end(), [&](const auto& n) { return o.sets.count(n); });
  }
  bool may_alias(const Alias& o) const {
    if ((sets.empty() && !wildcard) || (o.sets.empty() && !o.wildcard)) return false;
    return wildcard || o.wildcard || declares_alias(o);
  }
};

std::vector<Alias> annotations(const std::vector<Argument>& args) {
  std::vector<Alias> out;
  for (const Argument& a : args) out.emplace_back(a);
  return out;
}

// torch's standardize_name.
std::string arg_name(const Argument& a) { return a.name() == "self" ? "input" : a.name(); }

// The bytes `t` can reach, [low, high), or nothing (no elements, or no memory: Meta).
std::optional<std::pair<uintptr_t, uintptr_t>> span(const Tensor& t) {
  if (t.numel() == 0 || t.is_meta() || t.data_ptr() == nullptr) return std::nullopt;
  int64_t low = 0, high = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t reach = (t.sizes()[d] - 1) * t.strides()[d];
    low += std::min<int64_t>(0, reach);
    high += std::max<int64_t>(0, reach);
  }
  const auto base = reinterpret_cast<uintptr_t>(t.data_ptr());
  const auto size = static_cast<int64_t>(t.element_size());
  return std::pair{base + low * size, base + (high + 1) * size};
}

// Whether two values share memory (torch._C._overlaps, element-wise over lists).
bool overlaps(const std::vector<Tensor>& xs, const std::vector<Tensor>& ys) {
  for (const Tensor& x : xs) {
    const auto sx = span(x);
    for (const Tensor& y : ys) {
      if (x.is_same(y)) return true;
      const auto sy = span(y);
      if (sx && sy && sx->first < sy->second && sy->first < sx->second) return true;
    }
  }
  return false;
}

// The backend key a call on these tensors dispatches to: CUDA when one is on CUDA (as the Python
// check), else the first one's device that is not the CPU (Meta, a vendor's PrivateUse1), else CPU.
std::string backend_of(const std::vector<Tensor>& tensors) {
  DeviceType type = DeviceType::CPU;
  for (const Tensor& t : tensors) {
    if (t.device().type == DeviceType::CUDA) return to_string(DispatchKey::CUDA);
    if (type == DeviceType::CPU) type = t.device().type;
  }
  return to_string(backend_key_for(type));
}

// The computed table's entry for runtime key `key` ("registered at ... [math kernel]"), or
// nothing when no kernel serves it.
std::optional<std::string> computed_entry(const OperatorHandle& op, std::string_view key) {
  const std::string table = op.dump_computed_table();
  const std::string prefix = fmt::format("{}: ", key);
  size_t at = 0;
  while (at < table.size()) {
    size_t end = table.find('\n', at);
    if (end == std::string::npos) end = table.size();
    const std::string_view line(table.data() + at, end - at);
    if (line.starts_with(prefix)) return std::string(line.substr(prefix.size()));
    at = end + 1;
  }
  return std::nullopt;
}

// Whether a call on these tensors is served by a CompositeImplicitAutograd kernel (a backend's
// own kernel, when it has one, wins over it), read from the computed table as the Python check.
bool decomposes(const OperatorHandle& op, const std::vector<Tensor>& tensors) {
  const std::optional<std::string> entry = computed_entry(op, backend_of(tensors));
  return entry && entry->ends_with("[math kernel]");
}

// aten::_unsafe_view is meant to have incorrect aliasing notation (hence unsafe), as torch says.
bool unsafe_alias_op(const OperatorHandle& op) {
  const std::string name = op.operator_name().to_string();
  return name == "aten::_unsafe_view" || name == "aten::unsafe_split.Tensor";
}

// ---- test_schema ---------------------------------------------------------------------------

// A tensor's state before the call: geometry, storage, version and bytes.
struct Snapshot {
  std::vector<int64_t> sizes, strides;
  const void* storage;
  uint32_t version;
  Tensor bytes;
};

// `t`'s elements as bytes, so that NaNs compare equal to themselves (as torch compares int8
// views).
Tensor as_bytes(const Tensor& t) {
  Tensor flat = t.detach().reshape({-1}).contiguous();
  return flat.dtype() == ScalarType::UInt8 ? flat : flat.view(ScalarType::UInt8);
}

Snapshot snapshot(const Tensor& t) {
  NoGradGuard no_grad;
  return Snapshot{std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                  std::vector<int64_t>(t.strides().begin(), t.strides().end()),
                  t.storage().unsafe_get_impl(), t.version(), as_bytes(t).clone()};
}

bool has_mutated(const Snapshot& before, const Tensor& after) {
  if (!std::ranges::equal(after.sizes(), before.sizes) ||
      !std::ranges::equal(after.strides(), before.strides)) {
    return true;
  }
  if (after.storage().unsafe_get_impl() != before.storage || after.version() != before.version) {
    return true;
  }
  NoGradGuard no_grad;
  Tensor now = as_bytes(after);
  return now.dtype() != before.bytes.dtype() || !equal(now, before.bytes);
}

// Empty tensors reach no memory: whether they alias cannot be seen.
bool checkable(const std::vector<Tensor>& result, const std::vector<Tensor>& value) {
  if (result.empty() && value.empty()) return false;
  const auto ok = [](const Tensor& t) { return t.numel() != 0 && !t.is_meta(); };
  return std::all_of(result.begin(), result.end(), ok) &&
         std::all_of(value.begin(), value.end(), ok);
}

// Note [Written results are the arguments]
// A result the schema annotates written, Tensor(a!), is an in-place or out= result: the
// argument it wrote, returned as itself (the same TensorImpl), never a copy or a view of it.
// Python cannot see this rule broken: the binding returns the argument's own object whatever the
// kernel left (python/src/ops.cpp). A boxed caller sees the kernel's stack as it is, so here it
// is checked, on the first result that breaks it, before the alias rules (a new tensor would
// otherwise read as "defined to alias output but was not aliasing", which says less). The call
// runs below autograd, as torch's SchemaCheckMode does: an in-place autograd kernel returns
// `self` whatever the backend kernel returned, and would hide the backend's mistake. An operator
// no backend kernel serves (a vendor's, implemented at an Autograd key only) is called through
// autograd instead, and what its autograd kernel returns is checked: below autograd it has no
// kernel to run, and torch's check, which never sees such a call, passes it.
void check_written_results(const std::vector<Alias>& arguments, const std::vector<Alias>& returns,
                           const std::vector<Argument>& args, const Stack& values,
                           const Stack& outs) {
  for (size_t j = 0; j < outs.size() && j < returns.size(); ++j) {
    if (!returns[j].write || !outs[j].is_tensor()) continue;
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (!arguments[i].write || !arguments[i].declares_alias(returns[j])) continue;
      if (!values[i].is_tensor() || !values[i].to_tensor().defined()) continue;
      if (!outs[j].to_tensor().is_same(values[i].to_tensor())) {
        const std::string name = arg_name(args[i]);
        throw Error(fmt::format(
            "Argument {0} is written and returned as outputs[{1}] (Tensor(a!)), but "
            "`outputs[{1}] is {0}` is False: an in-place or out= kernel must return the argument "
            "it wrote",
            name, j));
      }
    }
  }
}

void schema_check(const OperatorHandle& op, const Stack& values) {
  const FunctionSchema& schema = op.schema();
  const std::vector<Argument>& args = schema.arguments();
  const std::vector<Alias> arguments = annotations(args);
  const std::vector<Alias> returns = annotations(schema.returns());
  const size_t n = args.size();
  std::vector<std::vector<Tensor>> tensors(n);
  std::vector<std::vector<Snapshot>> before(n);
  for (size_t i = 0; i < n; ++i) {
    tensors[i] = leaves(values[i]);
    for (const Tensor& t : tensors[i]) before[i].push_back(snapshot(t));
  }
  std::vector<Tensor> all;
  for (const auto& ts : tensors) all.insert(all.end(), ts.begin(), ts.end());
  Stack outs = values;
  if (computed_entry(op, backend_of(all))) {
    AutoDispatchBelowAutograd below_autograd;  // Note [Written results are the arguments]
    op.call_boxed(&outs);
  } else {
    op.call_boxed(&outs);  // only an autograd kernel serves it: what it returns is the result
  }
  if (outs.size() > returns.size()) outs.resize(returns.size());
  std::vector<std::vector<Tensor>> results;
  for (const IValue& o : outs) results.push_back(leaves(o));
  // A call a CompositeImplicitAutograd kernel serves: torch's SchemaCheckMode sees only the
  // operators it calls (dropout and contiguous may return their input), so the alias rules are
  // left to those operators' own checks.
  const bool composite = decomposes(op, all);
  if (!composite) check_written_results(arguments, returns, args, values, outs);
  for (size_t i = 0; i < n; ++i) {
    if (tensors[i].empty()) continue;
    // An argument that shares memory with another may alias, or be written, as that one.
    std::vector<size_t> peers;
    for (size_t k = 0; k < n; ++k) {
      if (k == i || overlaps(tensors[i], tensors[k])) peers.push_back(k);
    }
    const std::string name = arg_name(args[i]);
    const bool mutable_ =
        std::any_of(peers.begin(), peers.end(), [&](size_t k) { return arguments[k].write; });
    for (size_t j = 0; !composite && j < results.size(); ++j) {
      const bool may_alias = std::any_of(
          peers.begin(), peers.end(), [&](size_t k) { return arguments[k].may_alias(returns[j]); });
      const bool aliased = overlaps(results[j], tensors[i]);
      if (aliased && !may_alias && !unsafe_alias_op(op)) {
        throw Error(
            fmt::format("Argument {} is not defined to alias output but was aliasing", name));
      }
      if (arguments[i].declares_alias(returns[j]) && !aliased &&
          checkable(results[j], tensors[i])) {
        throw Error(
            fmt::format("Argument {} is defined to alias output but was not aliasing", name));
      }
      const bool is_value = values[i].is_tensor() && outs[j].is_tensor() &&
                            outs[j].to_tensor().is_same(values[i].to_tensor());
      if (is_value && !mutable_) {
        throw Error(fmt::format(
            "Dispatcher operators below autograd are not allowed to directly return inputs.\n"
            "However, we found that `outputs[{}] is {}",
            j, name));
      }
    }
    if (!mutable_) {
      for (size_t k = 0; k < tensors[i].size(); ++k) {
        if (has_mutated(before[i][k], tensors[i][k])) {
          throw Error(fmt::format("Argument {} is not defined as mutable but was mutated", name));
        }
      }
    }
  }
  for (size_t i = 0; !composite && i < results.size(); ++i) {
    for (size_t j = i + 1; j < results.size(); ++j) {
      if (overlaps(results[i], results[j]) && !returns[i].may_alias(returns[j])) {
        throw Error(fmt::format("Outputs {} and {} alias unexpectedly", i, j));
      }
    }
  }
}

// ---- test_autograd_registration ------------------------------------------------------------

// Sets the autograd fallback's mode for its scope; nothing when the autograd plugin, which owns
// the fallback, is not loaded.
class FallbackModeGuard {
 public:
  explicit FallbackModeGuard(std::string_view mode) {
    try {
      previous_ = autograd::fallback_mode();
    } catch (const Error&) {
      return;
    }
    autograd::set_fallback_mode(mode);
  }
  ~FallbackModeGuard() {
    if (previous_) autograd::set_fallback_mode(*previous_);
  }
  FallbackModeGuard(const FallbackModeGuard&) = delete;
  FallbackModeGuard& operator=(const FallbackModeGuard&) = delete;

 private:
  std::optional<std::string> previous_;
};

void autograd_registration_check(const OperatorHandle& op, const Stack& values) {
  const std::vector<Tensor> tensors = leaves(values);
  std::set<DeviceType> devices;
  for (const Tensor& t : tensors) devices.insert(t.device().type);
  std::vector<std::string> others;
  for (DeviceType d : devices) {
    if (d != DeviceType::CPU && d != DeviceType::CUDA) others.push_back(device_type_name(d));
  }
  if (!others.empty()) {
    std::vector<std::string> all;
    for (DeviceType d : devices) all.push_back(fmt::format("'{}'", device_type_name(d)));
    throw NotImplementedError(
        fmt::format("autograd_registration_check: NYI devices other than CPU/CUDA, got {{{}}}",
                    fmt::join(all, ", ")));
  }
  const DispatchKey key =
      devices.count(DeviceType::CUDA) ? DispatchKey::AutogradCUDA : DispatchKey::AutogradCPU;
  for (DispatchKey k : {key, DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd}) {
    if (op.has_kernel_for_dispatch_key(k)) return;
  }
  const std::string name = op.operator_name().to_string();
  // No autograd kernel: with the fallback told to do nothing, an output that requires grad was
  // given history by the backend kernel itself.
  Stack outs = values;
  {
    FallbackModeGuard nothing("nothing");
    op.call_boxed(&outs);
  }
  for (const Tensor& o : leaves(outs)) {
    const bool is_input =
        std::any_of(tensors.begin(), tensors.end(), [&](const Tensor& t) { return o.is_same(t); });
    if (requires_grad(o) && !is_input) {
      throw Error(fmt::format(
          "{}: at least one output of this operator has requires_grad=True but the operator does "
          "not have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). "
          "This could mean that you have incorrectly registered an autograd kernel to a "
          "non-Autograd DispatchKey, which may lead to silently incorrect results. If your "
          "operator consists of regular PyTorch operations, consider not using an operator at "
          "all or registering your operator as CompositeImplicitAutograd. If you have an "
          "autograd.Function registered to a backend (CPU/CUDA) key, the correct location for it "
          "is the Autograd key.",
          name));
    }
  }
  throw Error(fmt::format(
      "{}: its inputs require grad but the operator does not have an autograd kernel defined at "
      "an autograd key (e.g. DispatchKey::Autograd) or a CompositeImplicitAutograd kernel, so "
      "the call was served by the autograd fallback, which gives its outputs no gradient "
      "formula. If your operator is differentiable, register its backward (register_autograd, "
      "or an autograd kernel at the Autograd key); if it is not, call opcheck with inputs that "
      "do not require grad.",
      name));
}

// ---- test_faketensor -----------------------------------------------------------------------

// "aten.add.Tensor", "myops.f.default": the Python OpOverload's name, which the texts use.
std::string overload_str(const OperatorHandle& op) {
  const OperatorName& n = op.operator_name();
  const std::string_view name = n.name;
  const size_t sep = name.find("::");
  const std::string_view ns = sep == std::string_view::npos ? "" : name.substr(0, sep);
  const std::string_view op_name = sep == std::string_view::npos ? name : name.substr(sep + 2);
  return fmt::format("{}{}{}.{}", ns, ns.empty() ? "" : ".", op_name,
                     n.overload_name.empty() ? "default" : n.overload_name);
}

// Meta copies of the inputs with their sizes, strides and storage offsets; inputs that share
// storage share one meta storage, and an input given twice is one meta tensor.
Stack to_meta(const Stack& values) {
  using Key = std::pair<const void*, ScalarType>;
  std::map<Key, int64_t> extents;
  const auto key_of = [](const Tensor& t) { return Key{t.storage().unsafe_get_impl(), t.dtype()}; };
  for (const Tensor& t : leaves(values)) {
    if (t.numel() == 0) continue;
    int64_t& n = extents[key_of(t)];
    n = std::max(n, t.storage_offset() + extent(t));
  }
  NoGradGuard no_grad;
  std::map<Key, Tensor> bases;
  for (const auto& [key, n] : extents) {
    bases[key] = empty({n}, TensorOptions().dtype(key.second).device(Device(DeviceType::Meta)));
  }
  std::unordered_map<const TensorImpl*, Tensor> made;
  return map_tensors(values, [&](const Tensor& t) {
    auto found = made.find(t.unsafe_get_impl());
    if (found != made.end()) return found->second;
    Tensor m =
        t.numel()
            ? bases.at(key_of(t)).as_strided(t.sizes(), t.strides(), t.storage_offset())
            : empty_strided(t.sizes(), t.strides(),
                            TensorOptions().dtype(t.dtype()).device(Device(DeviceType::Meta)));
    if (requires_grad(t)) {
      AutoGradMode enabled(true);
      m.requires_grad_(true);
    }
    made.emplace(t.unsafe_get_impl(), m);
    return m;
  });
}

// Python's reprs, which the texts show: opdispatch.Size([3, 2]), (2, 1), opdispatch.float32.
std::string size_repr(IntArrayRef s) {
  return fmt::format("opdispatch.Size([{}])", fmt::join(s, ", "));
}
std::string tuple_repr(IntArrayRef s) {
  return s.size() == 1 ? fmt::format("({},)", s[0]) : fmt::format("({})", fmt::join(s, ", "));
}
std::string dtype_repr(ScalarType t) { return fmt::format("opdispatch.{}", python_name(t)); }

// The first dimension of length > 1 whose strides differ (torch's check_significant_strides).
std::optional<size_t> significant_strides_differ(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0) return std::nullopt;
  for (size_t i = 0; i < static_cast<size_t>(a.dim()); ++i) {
    if (a.sizes()[i] > 1 && a.strides()[i] != b.strides()[i]) return i;
  }
  return std::nullopt;
}

// Throws the detail torch's compare_tensor_meta gives, or nothing.
void compare_tensor_meta(const Tensor& real, const Tensor& fake, const std::string& device) {
  if (!std::ranges::equal(real.sizes(), fake.sizes())) {
    throw Error(fmt::format("Shapes {} and {} are not equal!", size_repr(real.sizes()),
                            size_repr(fake.sizes())));
  }
  if (real.dtype() != fake.dtype()) {
    throw Error(fmt::format("Dtypes {} and {} are not equal!", dtype_repr(real.dtype()),
                            dtype_repr(fake.dtype())));
  }
  if (device_type_name(fake.device().type) != device) {
    throw Error(fmt::format("Devices {} and {} are not equal!", device, fake.device().str()));
  }
  if (auto idx = significant_strides_differ(real, fake)) {
    throw Error(fmt::format("Stride mismatch! Strides are {} and {} (mismatched at {})!",
                            tuple_repr(real.strides()), tuple_repr(fake.strides()), *idx));
  }
}

// A call's results flattened: each list's elements in place of the list.
std::vector<IValue> flat_results(const Stack& outs) {
  std::vector<IValue> flat;
  for (const IValue& o : outs) {
    if (o.is_tensor_list()) {
      for (const Tensor& t : o.to_tensor_list()) flat.emplace_back(t);
    } else if (o.is_generic_list() || o.is_tuple()) {
      for (const IValue& e : flat_results(o.is_tuple() ? o.to_tuple() : o.to_generic_list())) {
        flat.push_back(e);
      }
    } else {
      flat.push_back(o);
    }
  }
  return flat;
}

void fake_check(const OperatorHandle& op, const Stack& values) {
  for (Tag t : {Tag::dynamic_output_shape, Tag::inplace_view, Tag::data_dependent_output}) {
    if (op.has_tag(t)) return;
  }
  if (!computed_entry(op, "Meta")) {
    throw Error(
        fmt::format("{} has no meta implementation: register a Meta kernel for {} "
                    "(Library.impl(..., 'Meta'))",
                    overload_str(op), op.operator_name().to_string()));
  }
  const Stack meta_values = to_meta(values);
  Stack fake_r = meta_values;
  op.call_boxed(&fake_r);
  Stack r = values;
  op.call_boxed(&r);
  const std::string context = fmt::format(
      "When comparing the output of {} on meta and concrete Tensors, found", overload_str(op));
  const std::vector<IValue> r_flat = flat_results(r), f_flat = flat_results(fake_r);
  if (r_flat.size() != f_flat.size()) {
    throw Error(fmt::format("{} mismatch in number of returns {} != {}", context, f_flat.size(),
                            r_flat.size()));
  }
  const auto outputs_are_inputs = [](const Stack& outs, const Stack& ins) {
    const std::vector<Tensor> os = leaves(outs), is = leaves(ins);
    return std::any_of(os.begin(), os.end(), [&](const Tensor& o) {
      return std::any_of(is.begin(), is.end(), [&](const Tensor& t) { return o.is_same(t); });
    });
  };
  const bool r_is = outputs_are_inputs(r, values), f_is = outputs_are_inputs(fake_r, meta_values);
  if (r_is != f_is) {
    throw MetadataMismatchError(fmt::format("{} mismatch in outputs_are_inputs check {} != {}",
                                            context, f_is ? "True" : "False",
                                            r_is ? "True" : "False"));
  }
  std::vector<Device> input_devices;
  for (const Tensor& t : leaves(values)) input_devices.push_back(t.device());
  for (size_t idx = 0; idx < r_flat.size(); ++idx) {
    const bool r_is_ten = r_flat[idx].is_tensor();
    if (r_is_ten != f_flat[idx].is_tensor()) {
      throw Error(fmt::format("{} mismatched number of tensor outputs", context));
    }
    if (!r_is_ten) continue;
    const Tensor& r_out = r_flat[idx].to_tensor();
    const Tensor& f_out = f_flat[idx].to_tensor();
    if (!r_out.defined() || !f_out.defined()) continue;
    if (requires_grad(r_out) != requires_grad(f_out)) {
      throw MetadataMismatchError(fmt::format(
          "{} mismatched requires_grad-ness of outputs. This usually means that you have added "
          "autograd support for your operator at a dispatch key other than Autograd, which will "
          "lead to problems",
          context));
    }
    if (r_out.storage_offset() != f_out.storage_offset()) {
      throw MetadataMismatchError(fmt::format("{} mismatched storage offset", context));
    }
    const bool on_input_device = std::find(input_devices.begin(), input_devices.end(),
                                           r_out.device()) != input_devices.end();
    const std::string device = on_input_device ? "meta" : device_type_name(r_out.device().type);
    try {
      compare_tensor_meta(r_out, f_out, device);
    } catch (const Error& e) {
      const std::string where = r_flat.size() == 1 ? "" : fmt::format(" for output[{}]", idx);
      throw MetadataMismatchError(
          fmt::format("{} mismatched tensor metadata{}: {}", context, where, e.msg()));
    }
  }
}

// ---- opcheck -------------------------------------------------------------------------------

void run(std::string_view test_util, const OperatorHandle& op, const Stack& stack) {
  if (any_meta(stack)) return;  // torch skips every check on fake inputs
  const Stack values = copy_inputs(stack);
  if (test_util == "test_schema") {
    schema_check(op, values);
  } else if (test_util == "test_autograd_registration") {
    const std::vector<Tensor> ts = leaves(values);
    if (std::none_of(ts.begin(), ts.end(), [](const Tensor& t) { return requires_grad(t); })) {
      return;  // nothing to check, as torch
    }
    autograd_registration_check(op, values);
  } else {
    fake_check(op, values);
  }
}

std::string python_tuple(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back(fmt::format("'{}'", n));
  return quoted.size() == 1 ? fmt::format("({},)", quoted[0])
                            : fmt::format("({})", fmt::join(quoted, ", "));
}

std::vector<std::string> resolve_test_utils(const std::vector<std::string>& asked) {
  if (asked.size() == 1 && asked[0] == "ALL") return {std::begin(kTestUtils), std::end(kTestUtils)};
  std::vector<std::string> aot;
  bool known = true;
  for (const std::string& t : asked) {
    if (std::find(std::begin(kTestUtils), std::end(kTestUtils), t) != std::end(kTestUtils))
      continue;
    known = false;
    if (t == "test_aot_dispatch_static" || t == "test_aot_dispatch_dynamic") aot.push_back(t);
  }
  if (!known) {
    const std::string why =
        aot.empty() ? ""
                    : fmt::format(" ({}: not available, opdispatch has no ahead-of-time compiler)",
                                  fmt::join(aot, ", "));
    throw ValueError(fmt::format(
        "opcheck(op, ..., test_utils={}), expected test_utils to be subset of {} but it was not{}",
        python_tuple(asked), python_tuple({std::begin(kTestUtils), std::end(kTestUtils)}), why));
  }
  return asked;
}

// The failure's text: an opd::Error's message without the "(raised at ...)" suffix.
std::string message_of(const std::exception& e) {
  if (const auto* err = dynamic_cast<const Error*>(&e)) return err->msg();
  return e.what();
}

}  // namespace

std::vector<OpCheckResult> opcheck(const OperatorHandle& op, const Stack& stack,
                                   const OpCheckOptions& options) {
  const std::vector<std::string> test_utils = resolve_test_utils(options.test_utils);
  OPD_CHECK_T(TypeError, op.has_schema(), "opcheck: {} has no schema",
              op.operator_name().to_string());
  OPD_CHECK_T(TypeError, stack.size() == op.num_arguments(),
              "opcheck({}, stack): the stack holds {} values but the schema has {} arguments "
              "(a boxed call takes every argument, defaults included)",
              op.operator_name().to_string(), stack.size(), op.num_arguments());
  std::vector<OpCheckResult> results;
  for (const std::string& util : test_utils) {
    try {
      run(util, op, stack);
      results.push_back({util, "SUCCESS", nullptr});
    } catch (const std::exception& e) {
      const std::string msg = message_of(e);
      if (options.raise_exception) {
        std::throw_with_nested(OpCheckError(fmt::format(
            "opcheck(op, ...): {} failed with {} (scroll up for stack trace)", util, msg)));
      }
      results.push_back({util, msg, std::current_exception()});
    }
  }
  return results;
}

}  // namespace opd::testing
