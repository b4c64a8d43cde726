#include "opd/operator_entry.h"

#include <fmt/format.h>

#include <algorithm>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "schema/infer_schema.h"

namespace opd {
namespace {

void missing_kernel(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack*) {
  op.entry().report_missing(ks);
}

const KernelFunction& missing_kernel_function() {
  static const KernelFunction k = KernelFunction::make_from_boxed_function(&missing_kernel);
  return k;
}

const char* source_name(KernelSource s) {
  switch (s) {
    case KernelSource::Kernel:
      return "kernel";
    case KernelSource::DefaultBackend:
      return "default backend kernel";
    case KernelSource::Math:
      return "math kernel";
    case KernelSource::Autograd:
      return "autograd kernel";
    case KernelSource::BackendFallback:
      return "backend fallback";
    case KernelSource::Missing:
      return "missing";
  }
  return "?";
}

// The backend key an autograd key stands above (AutogradCPU -> CPU); the key itself otherwise.
DispatchKey backend_below(DispatchKey k) {
  return is_autograd_key(k) ? to_runtime_key(DispatchKey::Dense, backend_of(k)) : k;
}

}  // namespace

OperatorEntry::OperatorEntry(OperatorName name) : name_(std::move(name)), masks_(0) {
  for (auto& slot : table_) slot.store(&missing_kernel_function(), std::memory_order_relaxed);
  masks_.store(kFullKeySet.raw(), std::memory_order_relaxed);
}

const FunctionSchema& OperatorEntry::schema() const {
  const FunctionSchema* s = schema_or_null();
  OPD_CHECK(s != nullptr, "{}: the operator has kernels but no schema; did you forget to def() it?",
            name_.to_string());
  return *s;
}

void OperatorEntry::publish_schema(FunctionSchema schema) {
  schema_owner_ = std::make_shared<FunctionSchema>(std::move(schema));
  const auto& args = schema_owner_->arguments();
  writes_arguments_.store(
      std::any_of(args.begin(), args.end(), [](const Argument& a) { return a.is_write(); }),
      std::memory_order_relaxed);
  schema_.store(schema_owner_.get(), std::memory_order_release);
}

std::shared_ptr<void> OperatorEntry::unpublish_schema() {
  schema_.store(nullptr, std::memory_order_release);
  writes_arguments_.store(false, std::memory_order_relaxed);
  return std::move(schema_owner_);
}

const std::string& OperatorEntry::schema_debug_locked() const {
  static const std::string kNone;
  return defs_.empty() ? kNone : defs_.front().debug;
}

void OperatorEntry::publish_tags() {
  tags_.store(defs_.empty() ? 0 : defs_.front().tags.raw(), std::memory_order_release);
}

std::string OperatorEntry::schema_debug() const {
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  return schema_debug_locked();
}

std::optional<AliasAnalysisKind> OperatorEntry::alias_analysis() const {
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  if (defs_.empty()) return std::nullopt;
  return defs_.front().alias_analysis.value_or(AliasAnalysisKind::CONSERVATIVE);
}

int OperatorEntry::def_count() const {
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  return static_cast<int>(defs_.size());
}

int OperatorEntry::def_and_impl_count() const {
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  return def_and_impl_count_;
}

bool OperatorEntry::has_kernel_for_dispatch_key(DispatchKey k) const {
  if (static_cast<int>(k) >= kNumDispatchKeys) return false;
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  return !kernels(k).empty();
}

// Note [Kernel precedence]
// The kernel serving runtime key k is, in order:
//  (1) a kernel registered to k itself;
//  (2) for backend keys (and Undefined): CompositeExplicitAutogradNonFunctional, then
//      CompositeExplicitAutograd;
//  (3) CompositeImplicitAutograd, for backend and autograd keys (and Undefined), unless the
//      operator has a backend kernel for k's backend or a CompositeExplicitAutograd* kernel:
//      then the backend kernel must be reached, through the autograd key falling through;
//  (4) for autograd keys: the Autograd alias kernel;
//  (5) the backend fallback of k;
//  (6) missing: calls report the error.
// This is PyTorch's OperatorEntry::computeDispatchTableEntryWithDebug for our keys.
OperatorEntry::Computed OperatorEntry::compute_entry(DispatchKey k, const Dispatcher& d) const {
  auto from = [](const KernelList& l, KernelSource s) {
    return Computed{&l.front()->kernel, &l.front()->debug, s};
  };
  using DK = DispatchKey;
  if (k != DK::Undefined && !kernels(k).empty()) return from(kernels(k), KernelSource::Kernel);

  bool backend_or_undefined = k == DK::Undefined || is_backend_key(k);
  const auto& ceanf = kernels(DK::CompositeExplicitAutogradNonFunctional);
  const auto& cea = kernels(DK::CompositeExplicitAutograd);
  if (backend_or_undefined && !ceanf.empty()) return from(ceanf, KernelSource::DefaultBackend);
  if (backend_or_undefined && !cea.empty()) return from(cea, KernelSource::DefaultBackend);

  const auto& cia = kernels(DK::CompositeImplicitAutograd);
  if (!cia.empty() &&
      (k == DK::Undefined || runtime_keys_for(DK::CompositeImplicitAutograd).has(k))) {
    bool has_backend_kernel = !cea.empty() || !ceanf.empty() ||
                              (k != DK::Undefined && !kernels(backend_below(k)).empty());
    if (!has_backend_kernel) return from(cia, KernelSource::Math);
  }

  const auto& autograd = kernels(DK::Autograd);
  if (is_autograd_key(k) && !autograd.empty()) return from(autograd, KernelSource::Autograd);

  if (k != DK::Undefined) {
    if (const auto& stack = d.fallbacks_[static_cast<int>(k)]; !stack.empty()) {
      const auto& fb = stack.front();
      return Computed{&fb->kernel, &fb->debug, KernelSource::BackendFallback};
    }
  }
  static const std::string kMissing = "missing";
  return Computed{&missing_kernel_function(), &kMissing, KernelSource::Missing};
}

// Note [Fallthrough]
// A fallthrough kernel is normally never called: update_table() drops its key from the key mask,
// so the dispatch key set of every call skips it and the next key serves the call. The table
// keeps the fallthrough kernel so that dumps and invariants can see it. A call reads the mask
// and then the table entry without a lock, so while a fallthrough is being registered or
// removed on a key it uses, it can pair a mask that still has the key with the new table entry
// (the fallthrough kernel). That call is not an error: the fallthrough kernel passes it to the
// keys below its own (kernel_function.cpp), which is what the new state does. The stores are
// also ordered by transition (a key turning fallthrough leaves the mask before its entry
// changes; a key turning real gets its entry before it joins the mask), so that pairing is
// rare, and the opposite one, an old mask without the key, only ever runs the old state.
void OperatorEntry::update_table(const Dispatcher& d) { update_entries(d, kFullKeySet, true); }

void OperatorEntry::update_table_for(const Dispatcher& d, DispatchKey registered) {
  // A kernel on key k can change the entries of k's runtime keys and, through the precedence
  // rules, the autograd entries above those backends (CompositeImplicitAutograd yields to a
  // backend kernel there); composite kernels also serve Undefined.
  DispatchKeySet keys = runtime_keys_for(registered);
  for (DispatchKey b : keys& kBackendKeySet) keys = keys | key_bit(autograd_key_for(backend_of(b)));
  update_entries(d, keys, is_alias_key(registered));
}

void OperatorEntry::update_entries(const Dispatcher& d, DispatchKeySet keys, bool undefined) {
  // See Note [Fallthrough] for the order of the stores, and Note [Autograd fallback fast path]
  // for the second mask. A key whose entry serves calls (is no fallthrough) is in one of the
  // two masks. Keys leaving both leave before their entries change and keys joining one join
  // after, as in Note [Fallthrough]; a key moving from one mask to the other is in key_mask
  // meanwhile, where either entry serves every call correctly.
  const Masks old = masks();
  uint64_t mask = old.key_mask.raw();
  uint64_t fallback = old.autograd_fallback_keys.raw();
  std::array<const KernelFunction*, kNumRuntimeEntries> computed{};
  auto compute = [&](DispatchKey k) OPD_REQUIRES(detail::registration_mutex) {
    int i = static_cast<int>(k);
    computed[i] = compute_entry(k, d).kernel;
    if (i == 0) return;
    const uint64_t bit = key_bit(k).raw();
    const bool is_fallback = computed[i]->is_autograd_fallback();
    mask = computed[i]->is_fallthrough() || is_fallback ? (mask & ~bit) : (mask | bit);
    fallback = is_fallback ? (fallback | bit) : (fallback & ~bit);
  };
  if (undefined) compute(DispatchKey::Undefined);
  for (DispatchKey k : keys) compute(k);
  const uint64_t old_mask = old.key_mask.raw();
  const uint64_t old_fallback = old.autograd_fallback_keys.raw();
  const uint64_t staying_fallback = old_fallback & fallback;
  const uint64_t interim_mask = ((old_mask | old_fallback) & (mask | fallback)) & ~staying_fallback;
  const uint64_t before = old_mask | (old_fallback << 32);
  const uint64_t interim = interim_mask | (staying_fallback << 32);
  const uint64_t after = mask | (fallback << 32);
  if (interim != before) masks_.store(interim, std::memory_order_release);
  for (int i = 0; i < kNumRuntimeEntries; ++i) {
    if (computed[i] && table_[i].load(std::memory_order_relaxed) != computed[i]) {
      table_[i].store(computed[i], std::memory_order_release);
    }
  }
  if (after != interim) masks_.store(after, std::memory_order_release);
}

std::optional<OperatorEntry::SignatureSource> OperatorEntry::cpp_signature() const {
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    for (const auto& k : kernels_[i]) {
      if (k->cpp_signature)
        return SignatureSource{*k->cpp_signature, static_cast<DispatchKey>(i), &k->debug};
    }
  }
  return std::nullopt;
}

void OperatorEntry::check_signature(const CppSignature& sig, const std::string& inferred) const {
  std::string problem;
  std::optional<FunctionSchema> schema;
  {
    Dispatcher::WriteLock lock(Dispatcher::singleton());
    std::string op = has_schema() ? schema_or_null()->to_string() : name_.to_string();
    if (auto known = cpp_signature()) {
      OPD_CHECK(known->signature == sig,
                "\nTried to access or call an operator with a wrong signature.\n  operator: "
                "{}\n    {}\n  correct signature:  {}\n    {}\n  accessed/called as: {}\n",
                op, schema_debug_locked(), known->signature.name(), *known->debug, sig.name());
      return;
    }
    if (!has_schema()) return;
    schema = *schema_or_null();
    problem = schema_debug_locked();
  }
  // Parsing and comparing need no lock: they use copies.
  auto reason = find_schema_differences(*schema, parse_schema(inferred));
  OPD_CHECK(!reason,
            "\nTried to access or call an operator with a wrong signature.\n  operator: {}\n    "
            "{}\n  accessed/called as: {} (schema {})\n  reason: {}\n",
            schema->to_string(), problem, sig.name(), inferred, reason.value_or(""));
}

std::string OperatorEntry::dump_state() const {
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  return dump_state_locked();
}

std::string OperatorEntry::dump_state_locked() const {
  std::string out = fmt::format("name: {}\n", name_.to_string());
  if (const FunctionSchema* s = schema_or_null()) {
    const DefRecord& def = defs_.front();
    // PyTorch's line, "(default)" marking a def that gave no kind (Note [Alias analysis kind]).
    out +=
        fmt::format("schema: {}\ndebug: {}\nalias analysis kind: {}{}\n", s->to_string(), def.debug,
                    to_string(def.alias_analysis.value_or(AliasAnalysisKind::CONSERVATIVE)),
                    def.alias_analysis ? "" : " (default)");
    if (!def.tags.empty()) out += "tags: " + to_string(def.tags) + "\n";
  } else {
    out += "schema: (none)\n";
  }
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto k = static_cast<DispatchKey>(i);
    bool first = true;
    for (const auto& kernel : kernels_[i]) {
      out += fmt::format("{}{}{}: {} :: {} [ {}]\n", to_string(k), is_alias_key(k) ? "[alias]" : "",
                         first ? "" : " (inactive)", kernel->debug,
                         kernel->inferred_schema ? kernel->inferred_schema->to_string() : "(none)",
                         kernel->kernel.dump_state());
      first = false;
    }
  }
  return out;
}

std::string OperatorEntry::dump_computed_table() const {
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  return dump_computed_table_locked();
}

std::string OperatorEntry::dump_computed_table_locked() const {
  const Dispatcher& d = Dispatcher::singleton();
  std::string out;
  for (int i = 0; i < kNumRuntimeEntries; ++i) {
    auto k = static_cast<DispatchKey>(i);
    Computed c = compute_entry(k, d);
    if (c.source == KernelSource::Missing) continue;
    out += fmt::format("{}: {}{} [{}]\n", display_name(k),
                       c.kernel->is_fallthrough() ? "fallthrough " : "", *c.debug,
                       source_name(c.source));
  }
  return out;
}

OperatorEntry::Origin OperatorEntry::origin_of(DispatchKey k,
                                               const KernelFunction& looked_up) const {
  Dispatcher& d = Dispatcher::singleton();
  Dispatcher::WriteLock lock(d);
  Computed c = compute_entry(k, d);
  if (c.kernel != &looked_up) return {"a kernel replaced since the call looked it up", "replaced"};
  return {*c.debug, source_name(c.source)};
}

std::string OperatorEntry::available_keys() const {
  std::string out;
  for (int i = 1; i < kNumRuntimeEntries; ++i) {
    if (table_[i].load(std::memory_order_acquire) == &missing_kernel_function()) continue;
    if (!out.empty()) out += ", ";
    out += display_name(static_cast<DispatchKey>(i));
  }
  return out;
}

void OperatorEntry::check_invariants() const {
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  check_invariants_locked();
}

void OperatorEntry::check_invariants_locked() const {
  auto fail = [&](const std::string& what) OPD_REQUIRES(detail::registration_mutex) {
    throw Error(
        fmt::format("{}: invariant violated: {}\nCanonical state\n~~~~~~~~~~~\n{}\n\nComputed "
                    "table:\n~~~~~~~~~~~\n{}",
                    name_.to_string(), what, dump_state_locked(), dump_computed_table_locked()));
  };
  if (const FunctionSchema* s = schema_or_null(); s && !(s->operator_name() == name_)) {
    fail(fmt::format("schema name {} differs from the operator's name",
                     s->operator_name().to_string()));
  }
  if (!kernels(DispatchKey::Undefined).empty()) fail("a kernel is registered to Undefined");
  if (defs_.empty() == has_schema()) fail("def_count and schema disagree");
  int kernel_count = 0;
  for (const auto& l : kernels_) kernel_count += static_cast<int>(l.size());
  if (def_count() + kernel_count != def_and_impl_count_)
    fail("def_and_impl_count is not defs + kernels");
  const Dispatcher& d = Dispatcher::singleton();
  uint64_t mask = kFullKeySet.raw();
  uint64_t fallback = 0;
  for (int i = 0; i < kNumRuntimeEntries; ++i) {
    auto k = static_cast<DispatchKey>(i);
    const KernelFunction* expected = compute_entry(k, d).kernel;
    if (table_[i].load(std::memory_order_acquire) != expected) {
      fail(fmt::format("the table entry for {} is not the computed one", to_string(k)));
    }
    if (i > 0 && (expected->is_fallthrough() || expected->is_autograd_fallback())) {
      mask &= ~key_bit(k).raw();
    }
    if (i > 0 && expected->is_autograd_fallback()) fallback |= key_bit(k).raw();
  }
  if (mask != key_mask().raw()) fail("the fallthrough key mask is stale");
  if (fallback != autograd_fallback_keys().raw()) fail("the autograd fallback key mask is stale");
}

void OperatorEntry::report_missing(DispatchKeySet ks) const {
  // The error path is cold: the lock makes the table dump consistent with the lists it reads.
  Dispatcher::WriteLock lock(Dispatcher::singleton());
  std::string name = name_.to_string();
  DispatchKey k = ks.highest_priority_key();
  if (k == DispatchKey::Undefined) {
    throw Error(fmt::format(
        "There were no tensor arguments to this function (e.g., you passed an empty list of "
        "Tensors), but no fallback function is registered for schema {}.  This usually means that "
        "this function requires a non-empty list of Tensors, or that you (the operator writer) "
        "forgot to register a fallback function.  Available functions are [{}].\n\n{}",
        name, available_keys(), dump_computed_table_locked()));
  }
  throw NotImplementedError(fmt::format(
      "Could not run '{}' with arguments from the '{}' backend. This could be because the "
      "operator doesn't exist for this backend, or because the plugin that provides it is not "
      "loaded. '{}' is only available for these backends: [{}].\n\n{}",
      name, display_name(k), name, available_keys(), dump_computed_table_locked()));
}

}  // namespace opd
