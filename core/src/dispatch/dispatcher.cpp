#include "opd/dispatcher.h"

#include <algorithm>
#include <set>

#include "dispatch/python_key_fallback.h"
#include "dispatch/registration_context.h"
#include "logging.h"
#include "opd/error.h"
#include "schema/infer_schema.h"

namespace opd {

// Note [Kernel reclamation]
// Dispatch reads an operator's table without a lock, so a kernel replaced or deregistered under
// the mutex may still be running on another thread, and an erased operator entry may still be
// being read. Such objects are retired, not freed. Every dispatcher call marks itself in flight
// in a thread-local counter (detail::CallScope: two plain stores, no fence): the low bits count
// the calls the thread is in, the high bits how many times that count went back to zero.
// Reclaiming takes a snapshot after a process-wide memory barrier (membarrier), which makes
// every thread's counter store visible: a call that started before the barrier shows as busy,
// and a call that starts after it loads the new table entry. The retired objects can be freed
// once every thread busy in the snapshot has left its calls (its high bits moved), so a thread
// that calls continuously never holds reclamation back for longer than one of its calls.
// Reclamation runs by itself once enough objects are retired, and whenever reclaim() is called
// (the plugin manager does, to unmap a plugin's library).

// Note [Registration listeners]
// Listeners run on the registering thread, under the registration mutex, at the point the
// event happens (after a def, before a schema goes), so each sees every operator's events in
// order and never a handle to an operator that is already gone. The mutex is re-entrant for
// the thread that holds it (WriteLock counts its depth), so a listener may look operators up,
// dump them or call them; what it must not do is register or deregister, which would change
// the maps being walked: that is refused with an Error. A listener that throws on a def
// refuses the def (undone, as if never made); one that throws on a deregistration is logged
// and ignored, since undoing a registration cannot fail.

Mutex detail::registration_mutex;

namespace {

constexpr size_t kReclaimThreshold = 256;

// How many WriteLocks this thread holds (the registration mutex is held iff > 0).
thread_local int tls_write_lock_depth = 0;

std::string debug_or_unknown(const std::string& d) { return d.empty() ? "(unknown)" : d; }

bool has_alias_annotations(const FunctionSchema& schema) {
  auto annotated = [](const Argument& a) { return a.alias_info() != nullptr; };
  return std::any_of(schema.arguments().begin(), schema.arguments().end(), annotated) ||
         std::any_of(schema.returns().begin(), schema.returns().end(), annotated);
}

}  // namespace

Dispatcher::Dispatcher() {
  // Autograd and ADInplaceOrView fall through unless a plugin serves them (the autograd
  // plugin's fallback covers these), so tensors can always carry those keys (see
  // key_set_for_device).
  for (DispatchKey k : kAutogradKeySet | key_bit(DispatchKey::ADInplaceOrView)) {
    auto& core = core_fallthroughs_[static_cast<int>(k)];
    core = std::make_shared<AnnotatedKernel>(
        AnnotatedKernel{nullptr, KernelFunction::make_fallthrough(), nullptr, std::nullopt,
                        "registered in opdispatch core"});
    fallbacks_[static_cast<int>(k)].push_front(core);
  }
  // Python dispatch (Note [Dispatch modes]): the Python key's fallback runs the thread's top
  // dispatch mode or the tensor subclass handler; PythonTLSSnapshot falls through.
  const std::pair<DispatchKey, KernelFunction> python_keys[] = {
      {DispatchKey::Python, KernelFunction::make_from_boxed_function(&detail::python_key_fallback)},
      {DispatchKey::PythonTLSSnapshot, KernelFunction::make_fallthrough()}};
  for (const auto& [k, kernel] : python_keys) {
    auto& core = core_fallthroughs_[static_cast<int>(k)];
    core = std::make_shared<AnnotatedKernel>(
        AnnotatedKernel{nullptr, kernel, nullptr, std::nullopt, "registered in opdispatch core"});
    fallbacks_[static_cast<int>(k)].push_front(core);
  }
}

Dispatcher& Dispatcher::singleton() {
  // Never destroyed: registrations owned by static objects of other libraries may be undone
  // after this library's static destructors ran.
  static Dispatcher* d = new Dispatcher();
  return *d;
}

std::optional<OperatorHandle> Dispatcher::find_op(const OperatorName& name) {
  WriteLock lock(*this);
  auto it = operators_.find(name);
  if (it == operators_.end()) return std::nullopt;
  return OperatorHandle(it->second.get());
}

std::optional<OperatorHandle> Dispatcher::find_schema(const OperatorName& name) {
  auto op = find_op(name);
  if (op && op->has_schema()) return op;
  return std::nullopt;
}

OperatorHandle Dispatcher::find_schema_or_throw(std::string_view name, std::string_view overload) {
  OperatorName op_name{std::string(name), std::string(overload)};
  auto op = find_op(op_name);
  OPD_CHECK(op.has_value(), "Could not find schema for {}", op_name.to_string());
  OPD_CHECK(op->has_schema(),
            "Could not find schema for {} but we found an implementation; did you forget to def() "
            "the operator?",
            op_name.to_string());
  return *op;
}

std::vector<OperatorName> Dispatcher::all_op_names() {
  WriteLock lock(*this);
  std::vector<OperatorName> names;
  names.reserve(operators_.size());
  for (const auto& [name, e] : operators_) names.push_back(name);
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
    return std::tie(a.name, a.overload_name) < std::tie(b.name, b.overload_name);
  });
  return names;
}

void Dispatcher::check_not_notifying(const OperatorName& name) const {
  OPD_CHECK(!notifying_,
            "{}: cannot register from a registration listener; listeners may look operators up "
            "and call them, but not register or deregister (see Note [Registration listeners])",
            name.to_string());
}

void Dispatcher::notify_deregistered(const OperatorHandle& op) {
  notifying_ = true;
  for (auto& l : listeners_) {
    try {
      l->on_operator_deregistered(op);
    } catch (const std::exception& e) {
      logger()->error("{}: a registration listener threw from on_operator_deregistered: {}",
                      op.operator_name().to_string(), e.what());
    } catch (...) {
      logger()->error("{}: a registration listener threw from on_operator_deregistered",
                      op.operator_name().to_string());
    }
  }
  notifying_ = false;
}

OperatorEntry& Dispatcher::create(const OperatorName& name) {
  auto entry = std::make_unique<OperatorEntry>(name);
  entry->update_table(*this);  // existing backend fallbacks apply to new operators
  auto [it, inserted] = operators_.emplace(name, std::move(entry));
  OPD_INTERNAL_ASSERT(inserted, "operator {} created twice", name.to_string());
  return *it->second;
}

void Dispatcher::cleanup(OperatorEntry& e) {
  if (e.def_and_impl_count_ > 0) return;
  auto it = operators_.find(e.operator_name());
  OPD_INTERNAL_ASSERT(it != operators_.end() && it->second.get() == &e);
  retire(std::shared_ptr<void>(std::move(it->second)));
  operators_.erase(it);
}

RegistrationHandle Dispatcher::register_def(FunctionSchema schema, std::string debug) {
  return register_def(std::move(schema), std::move(debug), TagSet());
}

RegistrationHandle Dispatcher::register_def(FunctionSchema schema, std::string debug, TagSet tags) {
  return register_def(std::move(schema), std::move(debug), tags, AliasAnalysisKind::FROM_SCHEMA);
}

RegistrationHandle Dispatcher::register_def(FunctionSchema schema, std::string debug, TagSet tags,
                                            std::optional<AliasAnalysisKind> alias_analysis) {
  opd_plugin_context* ctx = detail::current_registration_context();
  if (ctx) debug += ctx->suffix;
  // PyTorch's JIT raises this when it first analyses the operator; having no JIT, we refuse the
  // def (Note [Alias analysis kind]).
  OPD_CHECK(alias_analysis == AliasAnalysisKind::FROM_SCHEMA || !has_alias_annotations(schema),
            "In operator registration: Tried to register operator {} with aliasing information in "
            "the schema but without AliasAnalysisKind::FROM_SCHEMA. ({})",
            schema.to_string(), debug_or_unknown(debug));
  WriteLock lock(*this);
  OperatorName name = schema.operator_name();
  check_not_notifying(name);
  auto existing = operators_.find(name);
  if (existing != operators_.end() && existing->second->has_schema()) {
    const OperatorEntry& e = *existing->second;
    // A plugin being reloaded may def what its previous version defined, with the same schema,
    // so that the operator never disappears during the swap.
    bool replacing = ctx && ctx->replaces && *e.schema_or_null() == schema &&
                     std::all_of(e.defs_.begin(), e.defs_.end(),
                                 [&](const auto& d) { return d.owner.get() == ctx->replaces; });
    if (!replacing) {
      throw Error(fmt::format(
          "Tried to register an operator ({}) with the same name and overload name multiple "
          "times. Each overload's schema should only be registered with a single call to def(). "
          "Duplicate registration: {}. Original registration: {}",
          schema.to_string(), debug_or_unknown(debug), debug_or_unknown(e.schema_debug_locked())));
    }
  }
  // Check before creating anything, so a refused def leaves no trace.
  if (existing != operators_.end()) {
    for (const auto& list : existing->second->kernels_) {
      for (const auto& k : list) {
        if (k->inferred_schema) check_inferred_schema(schema, debug, *k->inferred_schema, k->debug);
      }
    }
  }
  OperatorEntry& e = existing != operators_.end() ? *existing->second : create(name);
  bool first = !e.has_schema();
  if (first) e.publish_schema(std::move(schema));
  auto record = e.defs_.insert(
      e.defs_.begin(), {std::move(debug), ctx ? ctx->owner : nullptr, tags, alias_analysis});
  e.publish_tags();
  ++e.def_and_impl_count_;
  if (first) {
    OperatorHandle handle(&e);
    notifying_ = true;
    for (auto l = listeners_.begin(); l != listeners_.end(); ++l) {
      std::string why;
      try {
        (*l)->on_operator_registered(handle);
        continue;
      } catch (const std::exception& ex) {
        why = ex.what();
      } catch (...) {
        why = "an exception that is not a std::exception";
      }
      // Refused: the listeners told so far hear the deregistration, then the def is undone.
      for (auto told = listeners_.begin(); told != l; ++told) {
        try {
          (*told)->on_operator_deregistered(handle);
        } catch (...) {
        }
      }
      notifying_ = false;
      retire(e.unpublish_schema());
      e.defs_.erase(record);
      e.publish_tags();
      --e.def_and_impl_count_;
      std::string schema_text = name.to_string();
      cleanup(e);
      throw Error(
          fmt::format("{}: the def was refused by a registration listener: {}", schema_text, why));
    }
    notifying_ = false;
  }

  return RegistrationHandle([this, entry = &e, record] {
    WriteLock lock(*this);
    OperatorEntry& e = *entry;
    OPD_INTERNAL_ASSERT(!e.defs_.empty());
    if (e.defs_.size() == 1) {
      notify_deregistered(OperatorHandle(&e));
      retire(e.unpublish_schema());
    }
    retire(std::move(record->owner));
    e.defs_.erase(record);
    e.publish_tags();
    --e.def_and_impl_count_;
    cleanup(e);
  });
}

RegistrationHandle Dispatcher::register_impl(OperatorName name, std::optional<DispatchKey> key,
                                             KernelFunction kernel,
                                             std::optional<CppSignature> cpp_signature,
                                             std::shared_ptr<const FunctionSchema> inferred_schema,
                                             std::string debug) {
  DispatchKey k = key.value_or(DispatchKey::CompositeImplicitAutograd);
  OPD_CHECK(k != DispatchKey::Undefined && k < DispatchKey::EndOfAliasKeys,
            "{}: cannot register a kernel to dispatch key {}", name.to_string(), to_string(k));
  OPD_CHECK(!is_per_backend_functionality_key(k),
            "{}: cannot register a kernel to {}, which stands for one key per backend; register "
            "to a runtime key ({}) or an alias key",
            name.to_string(), to_string(k),
            k == DispatchKey::Dense
                ? "CPU, CUDA, PrivateUse1, PrivateUse2, PrivateUse3, Meta"
                : "AutogradCPU, AutogradCUDA, AutogradPrivateUse1, AutogradPrivateUse2, "
                  "AutogradPrivateUse3, AutogradMeta");
  OPD_CHECK(kernel.is_valid(), "{}: the kernel registered at {} is empty", name.to_string(), debug);
  opd_plugin_context* ctx = detail::current_registration_context();
  if (ctx) debug += ctx->suffix;
  WriteLock lock(*this);
  check_not_notifying(name);
  auto existing = operators_.find(name);
  OperatorEntry* e = existing == operators_.end() ? nullptr : existing->second.get();
  // Every check runs before any change, so a refused impl leaves the state as it was.
  if (e && e->has_schema() && inferred_schema) {
    check_inferred_schema(*e->schema_or_null(), e->schema_debug_locked(), *inferred_schema, debug);
  }
  if (e && cpp_signature) {
    if (auto prev = e->cpp_signature(); prev && !(prev->signature == *cpp_signature)) {
      throw Error(fmt::format(
          "\nMismatch in kernel C++ signatures\n  operator: {}\n    {}\n  kernel 1: {}\n    "
          "dispatch key: {}\n    {}\n  kernel 2: {}\n    dispatch key: {}\n    {}\n",
          e->has_schema() ? e->schema_or_null()->to_string() : name.to_string(),
          debug_or_unknown(e->schema_debug_locked()), prev->signature.name(), to_string(prev->key),
          *prev->debug, cpp_signature->name(), to_string(k), debug));
    }
  }
  OperatorEntry& entry = e ? *e : create(name);
  auto& list = entry.kernels(k);
  bool reloading =
      ctx && ctx->replaces && !list.empty() && list.front()->owner.get() == ctx->replaces;
  if (!list.empty() && !reloading && warned_overrides_.emplace(name.to_string(), k).second) {
    // Once per operator and key: overriding is legitimate (tests, vendor plugins), but should
    // not go unnoticed.
    logger()->warn(
        "Overriding a previously registered kernel for the same operator and the same dispatch "
        "key\n  operator: {}\n    {}\n  dispatch key: {}\n  previous kernel: {}\n       new "
        "kernel: {}",
        entry.has_schema() ? entry.schema_or_null()->to_string() : name.to_string(),
        debug_or_unknown(entry.schema_debug_locked()), to_string(k), list.front()->debug, debug);
  }
  auto annotated = std::make_shared<AnnotatedKernel>(
      AnnotatedKernel{ctx ? ctx->owner : nullptr, std::move(kernel), std::move(inferred_schema),
                      std::move(cpp_signature), std::move(debug)});
  list.push_front(annotated);
  ++entry.def_and_impl_count_;
  entry.update_table_for(*this, k);

  // The entry outlives this registration: it is erased only with its last registration.
  return RegistrationHandle([this, e = &entry, k, annotated] {
    WriteLock lock(*this);
    auto& list = e->kernels(k);
    auto pos = std::find(list.begin(), list.end(), annotated);
    OPD_INTERNAL_ASSERT(pos != list.end());
    list.erase(pos);
    --e->def_and_impl_count_;
    e->update_table_for(*this, k);
    retire(annotated);
    cleanup(*e);
  });
}

RegistrationHandle Dispatcher::register_fallback(DispatchKey key, KernelFunction kernel,
                                                 std::string debug) {
  OPD_CHECK(is_runtime_key(key),
            "register_fallback: {} is not a runtime dispatch key; register alias keys through "
            "Library::fallback, which expands them",
            to_string(key));
  opd_plugin_context* ctx = detail::current_registration_context();
  if (ctx) debug += ctx->suffix;
  WriteLock lock(*this);
  check_not_notifying(OperatorName{"(backend fallback for " + display_name(key) + ")", ""});
  auto& stack = fallbacks_[static_cast<int>(key)];
  // A plugin being reloaded may register the fallbacks its previous version registered, and
  // any registration may cover the core's own fallthroughs (the autograd plugin's fallback).
  bool replacing = std::all_of(stack.begin(), stack.end(), [&](const auto& f) {
    return f == core_fallthroughs_[static_cast<int>(key)] ||
           (ctx && ctx->replaces && f->owner.get() == ctx->replaces);
  });
  if (!stack.empty() && !replacing) {
    throw Error(fmt::format(
        "Tried to register multiple backend fallbacks for the same dispatch key {}; previous "
        "registration {}, new registration {}",
        display_name(key), stack.front()->debug, debug));
  }
  auto annotated = std::make_shared<AnnotatedKernel>(AnnotatedKernel{
      ctx ? ctx->owner : nullptr, std::move(kernel), nullptr, std::nullopt, std::move(debug)});
  stack.push_front(annotated);
  for (auto& [name, e] : operators_) e->update_entries(*this, key_bit(key), false);

  return RegistrationHandle([this, key, annotated] {
    WriteLock lock(*this);
    auto& stack = fallbacks_[static_cast<int>(key)];
    auto pos = std::find(stack.begin(), stack.end(), annotated);
    OPD_INTERNAL_ASSERT(pos != stack.end());
    stack.erase(pos);
    for (auto& [name, e] : operators_) e->update_entries(*this, key_bit(key), false);
    retire(annotated);
  });
}

RegistrationHandle Dispatcher::register_library(std::string ns, std::string debug) {
  opd_plugin_context* ctx = detail::current_registration_context();
  if (ctx) debug += ctx->suffix;
  const void* owner = ctx ? ctx->owner.get() : nullptr;
  WriteLock lock(*this);
  check_not_notifying(OperatorName{"(library " + ns + ")", ""});
  auto& claims = libraries_[ns];
  bool replacing = ctx && ctx->replaces &&
                   std::all_of(claims.begin(), claims.end(),
                               [&](const auto& c) { return c.owner == ctx->replaces; });
  if (!claims.empty() && !replacing) {
    throw Error(fmt::format(
        "Only a single OPD_LIBRARY can be used to register the namespace {}; please put all of "
        "your definitions in a single OPD_LIBRARY block.  If you were trying to specify "
        "implementations, consider using OPD_LIBRARY_IMPL (which can be duplicated).  If you "
        "really intended to define operators for a single namespace in a distributed way, you "
        "can use OPD_LIBRARY_FRAGMENT to explicitly indicate this.  Previous registration of "
        "OPD_LIBRARY was {}; latest registration was {}",
        ns, claims.front().debug, debug));
  }
  auto claim = claims.insert(claims.begin(), {debug, owner});
  return RegistrationHandle([this, ns, claim] {
    WriteLock lock(*this);
    auto it = libraries_.find(ns);
    OPD_INTERNAL_ASSERT(it != libraries_.end());
    it->second.erase(claim);
    if (it->second.empty()) libraries_.erase(it);
  });
}

RegistrationHandle Dispatcher::add_registration_listener(
    std::unique_ptr<OpRegistrationListener> listener) {
  WriteLock lock(*this);
  check_not_notifying(OperatorName{"(registration listener)", ""});
  notifying_ = true;
  try {
    for (auto& [name, e] : operators_) {
      if (!e->defs_.empty()) listener->on_operator_registered(OperatorHandle(e.get()));
    }
  } catch (...) {
    notifying_ = false;
    throw;
  }
  notifying_ = false;
  listeners_.push_back(std::move(listener));
  auto it = std::prev(listeners_.end());
  return RegistrationHandle([this, it] {
    WriteLock lock(*this);
    listeners_.erase(it);
  });
}

std::vector<OperatorName> Dispatcher::find_dangling_impls() {
  WriteLock lock(*this);
  std::vector<OperatorName> out;
  for (const auto& [name, e] : operators_) {
    if (!e->has_schema()) out.push_back(name);
  }
  return out;
}

void Dispatcher::check_invariants() {
  WriteLock lock(*this);
  for (const auto& [name, e] : operators_) e->check_invariants_locked();
}

std::vector<std::string> Dispatcher::registrations_for_dispatch_key(
    std::optional<DispatchKey> key) {
  WriteLock lock(*this);
  std::vector<std::string> out;
  for (const auto& [name, e] : operators_) {
    if (!key || e->has_kernel_for_dispatch_key(*key)) out.push_back(name.to_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> Dispatcher::fallback_debug(DispatchKey key) {
  WriteLock lock(*this);
  if (!is_runtime_key(key) || fallbacks_[static_cast<int>(key)].empty()) return std::nullopt;
  return fallbacks_[static_cast<int>(key)].front()->debug;
}

void Dispatcher::retire(std::shared_ptr<void> object) {
  if (!object) return;
  retired_.push_back(std::move(object));
  if (retired_.size() >= kReclaimThreshold) reclaim_locked();
}

size_t Dispatcher::reclaim_locked() {
  size_t freed = 0;
  for (auto it = batches_.begin(); it != batches_.end();) {
    if (!detail::has_passed(it->snapshot)) {
      ++it;
      continue;
    }
    freed += it->objects.size();
    std::move(it->objects.begin(), it->objects.end(), std::back_inserter(garbage_));
    it = batches_.erase(it);
  }
  if (retired_.empty()) return freed;
  detail::QuiescenceSnapshot snapshot = detail::take_quiescence_snapshot();
  if (snapshot.valid && snapshot.busy.empty()) {
    freed += retired_.size();
    std::move(retired_.begin(), retired_.end(), std::back_inserter(garbage_));
  } else {
    batches_.push_back({std::move(snapshot), std::move(retired_)});
  }
  retired_.clear();
  return freed;
}

size_t Dispatcher::reclaim() {
  WriteLock lock(*this);
  return reclaim_locked();
}

Dispatcher::WriteLock::WriteLock(Dispatcher& d) OPD_NO_THREAD_SAFETY_ANALYSIS
    : d_(d),
      outermost_(tls_write_lock_depth == 0) {
  if (outermost_) detail::registration_mutex.lock();
  ++tls_write_lock_depth;
}

Dispatcher::WriteLock::~WriteLock() OPD_NO_THREAD_SAFETY_ANALYSIS {
  --tls_write_lock_depth;
  if (!outermost_) return;
  // Destroyed outside the lock: a functor's destructor (or the plugin whose code it holds) may
  // register or deregister.
  std::vector<std::shared_ptr<void>> garbage = std::move(d_.garbage_);
  d_.garbage_.clear();
  detail::registration_mutex.unlock();
}

size_t Dispatcher::registrations_owned_by(const void* owner) {
  WriteLock lock(*this);
  size_t n = 0;
  for (const auto& [name, e] : operators_) {
    for (const auto& d : e->defs_) n += d.owner.get() == owner;
    for (const auto& list : e->kernels_) {
      for (const auto& k : list) n += k->owner.get() == owner;
    }
  }
  for (const auto& stack : fallbacks_) {
    for (const auto& fb : stack) n += fb->owner.get() == owner;
  }
  for (const auto& [ns, claims] : libraries_) {
    for (const auto& c : claims) n += c.owner == owner;
  }
  return n;
}

void Dispatcher::release_when_quiescent(std::shared_ptr<void> object) {
  WriteLock lock(*this);
  retire(std::move(object));
}

size_t Dispatcher::retired_count() {
  WriteLock lock(*this);
  size_t n = retired_.size();
  for (const auto& b : batches_) n += b.objects.size();
  return n;
}

}  // namespace opd
