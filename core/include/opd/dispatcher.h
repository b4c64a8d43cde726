#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opd/boxing.h"
#include "opd/dispatch_observer.h"
#include "opd/function_schema.h"
#include "opd/kernel_function.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/operator_entry.h"
#include "opd/operator_handle.h"
#include "opd/registration_handle.h"
#include "opd/thread_registry.h"

namespace opd {

namespace detail {

// Marks a dispatcher call in flight on this thread for its duration; see Note [Kernel
// reclamation] in dispatcher.cpp. Costs two thread-local stores, a compiler barrier and one
// predictable branch.
class CallScope {
 public:
  static constexpr uint64_t kDepthMask = 0xffff;
  static constexpr uint64_t kEpoch = kDepthMask + 1;

  CallScope() : s_(tls_call_counter) {
    if (!s_.registered) [[unlikely]]
      register_dispatch_thread();
#if defined(__SANITIZE_THREAD__)
    s_.calls.fetch_add(1, std::memory_order_seq_cst);
#else
    s_.calls.store(s_.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
  }
  ~CallScope() {
    uint64_t v = s_.calls.load(std::memory_order_relaxed) - 1;
    if ((v & kDepthMask) == 0) v += kEpoch;
    s_.calls.store(v, std::memory_order_release);
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  ThreadCallCounter& s_;
};

inline DispatchKeySet key_set_of(const Tensor& t) { return t.key_set(); }
inline DispatchKeySet key_set_of(const std::optional<Tensor>& t) {
  return t ? t->key_set() : DispatchKeySet();
}
inline DispatchKeySet key_set_of(std::span<const Tensor> ts) {
  DispatchKeySet ks;
  for (const auto& t : ts) ks = ks | t.key_set();
  return ks;
}
inline DispatchKeySet key_set_of(const std::vector<Tensor>& ts) {
  return key_set_of(std::span<const Tensor>(ts));
}
// TensorList (cat's Tensor[]) would otherwise match the catch-all template below.
inline DispatchKeySet key_set_of(const TensorList& ts) {
  return key_set_of(std::span<const Tensor>(ts));
}
inline DispatchKeySet key_set_of(const std::vector<std::optional<Tensor>>& ts) {
  DispatchKeySet ks;
  for (const auto& t : ts) ks = ks | key_set_of(t);
  return ks;
}
// Factory functions have no tensor to dispatch on: they dispatch on their device argument, and
// on CPU when it is None (the role of PyTorch's BackendSelect key). Only the backend key: a
// device argument never brings autograd in.
inline DispatchKeySet key_set_of(Device d) { return DispatchKeySet(backend_key_for(d.type)); }
inline DispatchKeySet key_set_of(const std::optional<Device>& d) {
  return DispatchKeySet(backend_key_for(d ? d->type : DeviceType::CPU));
}
template <class T>
DispatchKeySet key_set_of(const T&) {
  return {};
}

// OR of the key sets of every tensor-like argument.
template <class... Args>
DispatchKeySet arguments_key_set(const Args&... args) {
  return (DispatchKeySet() | ... | key_set_of(args));
}

// Whether a tensor-like argument has autograd state (Note [Autograd fallback fast path]): a
// tensor without any cannot require grad.
inline bool has_autograd_state(const Tensor& t) {
  return t.defined() && t.unsafe_get_impl()->autograd_meta() != nullptr;
}
inline bool has_autograd_state(const std::optional<Tensor>& t) {
  return t && has_autograd_state(*t);
}
inline bool has_autograd_state(std::span<const Tensor> ts) {
  for (const auto& t : ts) {
    if (has_autograd_state(t)) return true;
  }
  return false;
}
inline bool has_autograd_state(const std::vector<Tensor>& ts) {
  return has_autograd_state(std::span<const Tensor>(ts));
}
inline bool has_autograd_state(const TensorList& ts) {
  return has_autograd_state(std::span<const Tensor>(ts));
}
inline bool has_autograd_state(const std::vector<std::optional<Tensor>>& ts) {
  for (const auto& t : ts) {
    if (has_autograd_state(t)) return true;
  }
  return false;
}
template <class T>
bool has_autograd_state(const T&) {
  return false;
}

// The mask of a call's key set: the operator's key_mask(), plus the autograd fallback's keys
// when it has work for these arguments (Note [Autograd fallback fast path]).
template <class... Args>
[[gnu::always_inline]] inline DispatchKeySet call_key_mask(const OperatorEntry& e,
                                                           const Args&... args) {
  const OperatorEntry::Masks m = e.masks();
  if (!m.autograd_fallback_keys.empty()) [[unlikely]] {
    if (e.writes_arguments() || (false || ... || has_autograd_state(args))) {
      return m.key_mask | m.autograd_fallback_keys;
    }
  }
  return m.key_mask;
}

// The slow path of a call while a DispatchObserver is installed (Note [Observed dispatch]).
template <class Ret, class... Args>
[[gnu::noinline, gnu::cold]] Ret call_observed(const OperatorHandle& op, DispatchKeySet ks,
                                               DispatchEntry entry, const KernelFunction& kernel,
                                               Args... args) {
  ObservedHop hop(op, ks, entry, kernel);
  return kernel.template call<Ret, Args...>(op, ks, std::forward<Args>(args)...);
}

// The key set a call dispatches on: ((arguments | included) - excluded) & mask.
inline DispatchKeySet compute_dispatch_key_set(DispatchKeySet args, DispatchKeySet mask) {
  const auto& s = tls_dispatch_keys;
  return ((args | DispatchKeySet::from_raw(s.included)) - DispatchKeySet::from_raw(s.excluded)) &
         mask;
}

}  // namespace detail

template <class Ret, class... Args>
class TypedOperatorHandle<Ret(Args...)> : public OperatorHandle {
 public:
  // The dispatch fast path: key set, one table load, one indirect call. No lock.
  // Always inlined, as c10's: the call's bookkeeping is a few instructions, a function call
  // around them would cost as much again.
  [[gnu::always_inline]] Ret call(Args... args) const {
    const OperatorEntry& e = *entry_;
    const DispatchKeySet ks = detail::compute_dispatch_key_set(detail::arguments_key_set(args...),
                                                               detail::call_key_mask(e, args...));
    detail::CallScope scope;
    const KernelFunction& kernel = e.lookup(ks);
    if (detail::dispatch_observed()) [[unlikely]]
      return detail::call_observed<Ret, Args...>(*this, ks, DispatchEntry::Call, kernel,
                                                 std::forward<Args>(args)...);
    return kernel.template call<Ret, Args...>(*this, ks, std::forward<Args>(args)...);
  }
  // Calls the kernel for `keys` (masked by the operator's fallthroughs), ignoring the TLS sets:
  // for kernels that handled their own key and pass the call on.
  [[gnu::always_inline]] Ret redispatch(DispatchKeySet keys, Args... args) const {
    const OperatorEntry& e = *entry_;
    const DispatchKeySet ks = keys & detail::call_key_mask(e, args...);
    detail::CallScope scope;
    const KernelFunction& kernel = e.lookup(ks);
    if (detail::dispatch_observed()) [[unlikely]]
      return detail::call_observed<Ret, Args...>(*this, ks, DispatchEntry::Redispatch, kernel,
                                                 std::forward<Args>(args)...);
    return kernel.template call<Ret, Args...>(*this, ks, std::forward<Args>(args)...);
  }

 private:
  friend class OperatorHandle;
  explicit TypedOperatorHandle(OperatorEntry* e) : OperatorHandle(e) {}
};

template <class Sig>
TypedOperatorHandle<Sig> OperatorHandle::typed() const {
  entry_->check_signature(CppSignature::make<Sig>(), infer_schema_string<Sig>());
  return TypedOperatorHandle<Sig>(entry_);
}

// Told about every operator that gains or loses its schema. Listeners are called on the
// registering thread while it holds the registration mutex, which that thread may take again:
// a listener may look operators up, dump them and call them. It must not register or
// deregister anything (Error). See Note [Registration listeners] in dispatcher.cpp.
class OpRegistrationListener {
 public:
  virtual ~OpRegistrationListener() = default;
  // After a def (or, when the listener is added, for each operator already defined). Throwing
  // refuses the def: it is undone, the listeners told before hear on_operator_deregistered, and
  // register_def throws Error naming the operator and the listener's message.
  virtual void on_operator_registered(const OperatorHandle& op) = 0;
  // Before the schema of `op` is removed. What it throws is logged and ignored: deregistration
  // always completes.
  virtual void on_operator_deregistered(const OperatorHandle& op) = 0;
};

// The process-wide operator registry. All registration is serialised by one mutex; dispatch
// (TypedOperatorHandle::call, OperatorHandle::call_boxed) takes no lock. Every register_* call
// returns a handle that undoes it; undoing in any order leaves the state a registration order
// without that registration would have produced (the commutation property).
class OPD_API Dispatcher {
 public:
  // The single instance, defined in libopd_core.so.
  static Dispatcher& singleton();

  // Lookup. find_schema finds operators that have a schema; find_op also impl-only ones.
  std::optional<OperatorHandle> find_schema(const OperatorName& name);
  std::optional<OperatorHandle> find_op(const OperatorName& name);
  // Throws Error "Could not find schema for aten::foo.bar" (with a hint when an impl exists).
  OperatorHandle find_schema_or_throw(std::string_view name, std::string_view overload_name);
  std::vector<OperatorName> all_op_names();

  // Registration. `debug` says where it came from ("registered at file:line").
  // Throws Error for a second def of the same name and overload (naming both sites), or when the
  // schema disagrees with an existing kernel's inferred schema.
  RegistrationHandle register_def(FunctionSchema schema, std::string debug);
  // The same with the definition's tags (Note [Operator tags]).
  RegistrationHandle register_def(FunctionSchema schema, std::string debug, TagSet tags);
  // The same with its alias analysis kind (Note [Alias analysis kind]; the overloads above give
  // FROM_SCHEMA, nullopt gives none). Also throws Error when the schema has alias annotations
  // and the kind is not FROM_SCHEMA.
  RegistrationHandle register_def(FunctionSchema schema, std::string debug, TagSet tags,
                                  std::optional<AliasAnalysisKind> alias_analysis);
  // `key` nullopt registers to CompositeImplicitAutograd (PyTorch's catch-all). Throws Error when
  // the inferred schema or C++ signature disagrees with the def or another kernel.
  RegistrationHandle register_impl(OperatorName op, std::optional<DispatchKey> key,
                                   KernelFunction kernel, std::optional<CppSignature> cpp_signature,
                                   std::shared_ptr<const FunctionSchema> inferred_schema,
                                   std::string debug);
  // A boxed kernel serving `key` (a runtime key) for every operator without a kernel of its own
  // for it. Throws Error for a second fallback on the same key, naming both sites.
  RegistrationHandle register_fallback(DispatchKey key, KernelFunction kernel, std::string debug);
  // Claims namespace `ns` for a Def library. Throws Error when another Def library holds it.
  RegistrationHandle register_library(std::string ns, std::string debug);
  // Adds a listener, first replaying on_operator_registered for every defined operator. When the
  // listener throws during the replay it is not added and the error propagates.
  RegistrationHandle add_registration_listener(std::unique_ptr<OpRegistrationListener> listener);

  // Introspection, for tests and tools.
  std::vector<OperatorName> find_dangling_impls();
  // Throws Error naming the first operator whose state is inconsistent.
  void check_invariants();
  // Names of operators with a kernel registered directly to `key`; all operators for nullopt.
  std::vector<std::string> registrations_for_dispatch_key(std::optional<DispatchKey> key);
  // The fallback registered for `key`, if any.
  std::optional<std::string> fallback_debug(DispatchKey key);

  // Frees replaced kernels and erased operators that no thread can still be running. Runs by
  // itself as registrations accumulate; returns the number of objects freed.
  size_t reclaim();
  // Replaced kernels and erased operators waiting for reclamation.
  size_t retired_count();
  // Releases `object` once every dispatcher call that may have started before this call has
  // returned (the quiescence of Note [Kernel reclamation]): for references that code running
  // inside a kernel may still use, such as a plugin's reference on its own library.
  void release_when_quiescent(std::shared_ptr<void> object);
  // Defs, kernels, fallbacks and DEF libraries registered by the plugin whose library reference
  // is `owner` and not yet undone. Used by the plugin manager to check loads and unloads.
  size_t registrations_owned_by(const void* owner);

 private:
  friend class OperatorEntry;
  // Holds the registration mutex. Re-entrant on the thread that holds it (a listener, or an
  // error raised under the lock, may look operators up); the outermost one, on release, frees
  // the reclaimed objects after unlocking.
  class OPD_SCOPED_CAPABILITY WriteLock {
   public:
    explicit WriteLock(Dispatcher& d) OPD_ACQUIRE(detail::registration_mutex);
    ~WriteLock() OPD_RELEASE();
    WriteLock(const WriteLock&) = delete;
    WriteLock& operator=(const WriteLock&) = delete;

   private:
    Dispatcher& d_;
    bool outermost_;
  };
  Dispatcher();
  // REQUIRES: no entry for `name` exists.
  OperatorEntry& create(const OperatorName& name) OPD_REQUIRES(detail::registration_mutex);
  void cleanup(OperatorEntry& e) OPD_REQUIRES(detail::registration_mutex);
  void retire(std::shared_ptr<void> object) OPD_REQUIRES(detail::registration_mutex);
  size_t reclaim_locked() OPD_REQUIRES(detail::registration_mutex);
  // Throws Error when called from a registration listener (Note [Registration listeners]).
  void check_not_notifying(const OperatorName& name) const OPD_REQUIRES(detail::registration_mutex);
  // Tells every listener that `op` lost its schema; contains what they throw.
  void notify_deregistered(const OperatorHandle& op) OPD_REQUIRES(detail::registration_mutex);

  std::unordered_map<OperatorName, std::unique_ptr<OperatorEntry>> operators_
      OPD_GUARDED_BY(detail::registration_mutex);
  struct LibraryClaim {
    std::string debug;
    const void* owner;
  };
  // Namespace -> DEF libraries, newest first; more than one only during a plugin reload.
  std::unordered_map<std::string, std::list<LibraryClaim>> libraries_
      OPD_GUARDED_BY(detail::registration_mutex);
  // Per runtime key, newest first; more than one only while a plugin is being reloaded, or
  // over one of the core's own fallthroughs.
  std::array<std::list<std::shared_ptr<AnnotatedKernel>>, kNumRuntimeEntries> fallbacks_
      OPD_GUARDED_BY(detail::registration_mutex);
  // The core's own backend fallbacks (set once, in the constructor): fallthroughs on the
  // Autograd, ADInplaceOrView and PythonTLSSnapshot keys and the Python key's fallback (Note
  // [Dispatch modes]); always at the bottom of their stacks, so they come back when what covered
  // them is deregistered.
  std::array<std::shared_ptr<AnnotatedKernel>, kNumRuntimeEntries> core_fallthroughs_;
  std::list<std::unique_ptr<OpRegistrationListener>> listeners_
      OPD_GUARDED_BY(detail::registration_mutex);
  // True while listeners are being called.
  bool notifying_ OPD_GUARDED_BY(detail::registration_mutex) = false;
  // Override warnings given.
  std::set<std::pair<std::string, DispatchKey>> warned_overrides_
      OPD_GUARDED_BY(detail::registration_mutex);
  // Unpublished, maybe still running.
  std::vector<std::shared_ptr<void>> retired_ OPD_GUARDED_BY(detail::registration_mutex);
  // Retired objects waiting for the threads that were in a call when they were unpublished.
  struct Batch {
    detail::QuiescenceSnapshot snapshot;
    std::vector<std::shared_ptr<void>> objects;
  };
  std::list<Batch> batches_ OPD_GUARDED_BY(detail::registration_mutex);
  // Reclaimed, freed when the outermost lock is released.
  std::vector<std::shared_ptr<void>> garbage_ OPD_GUARDED_BY(detail::registration_mutex);
};

}  // namespace opd
