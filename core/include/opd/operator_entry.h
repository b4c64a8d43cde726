#pragma once

#include <array>
#include <atomic>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "opd/alias_analysis.h"
#include "opd/boxing.h"
#include "opd/dispatch_key_set.h"
#include "opd/function_schema.h"
#include "opd/kernel_function.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/tag.h"
#include "opd/thread_annotations.h"

namespace opd {

class Dispatcher;

namespace detail {
// The dispatcher's registration mutex (Dispatcher::WriteLock takes it): it guards every
// operator entry's kernel lists and defs as well as the dispatcher's own maps.
OPD_API extern Mutex registration_mutex;
}  // namespace detail

// One registered kernel with what the dispatcher knows about it.
struct AnnotatedKernel {
  // The plugin that registered it (keeps its code mapped); null for executables. First, so that
  // it is released last, after the functor's destructor (plugin code) has run.
  std::shared_ptr<void> owner;
  KernelFunction kernel;
  // From the C++ signature, shared by every kernel of that signature; null when boxed.
  std::shared_ptr<const FunctionSchema> inferred_schema;
  std::optional<CppSignature> cpp_signature;  // none when boxed
  std::string debug;                          // "registered at file:line"
};

// Where a computed-table entry came from, printed in dump_computed_table() as PyTorch does.
enum class KernelSource : uint8_t {
  Kernel,
  DefaultBackend,
  Math,
  Autograd,
  BackendFallback,
  Missing
};

// The per-operator state: schema, registered kernels per key and the computed runtime table.
// Mutated only by the Dispatcher under its registration mutex; the table and key mask are read
// by dispatching threads without a lock (atomics; see Note [Kernel reclamation]). Every public
// method is safe to call from any thread, concurrently with registration: those that read the
// kernel lists take the registration mutex (or run under it already, on this thread).
class OPD_API OperatorEntry {
 public:
  explicit OperatorEntry(OperatorName name);
  OperatorEntry(const OperatorEntry&) = delete;
  OperatorEntry& operator=(const OperatorEntry&) = delete;

  const OperatorName& operator_name() const { return name_; }
  bool has_schema() const { return schema_.load(std::memory_order_acquire) != nullptr; }
  // Throws Error when the operator has no schema (impls only).
  const FunctionSchema& schema() const;
  // The schema, or null for an impl-only operator: for the boxed call path, which reads it on
  // every call.
  const FunctionSchema* schema_or_null() const { return schema_.load(std::memory_order_acquire); }
  // The active def's tags (Note [Operator tags]); empty without a schema.
  TagSet tags() const { return TagSet::from_raw(tags_.load(std::memory_order_acquire)); }
  // Where the active def came from; empty without a schema.
  std::string schema_debug() const;
  // The active def's alias analysis kind (Note [Alias analysis kind]), CONSERVATIVE when it gave
  // none; nullopt without a schema.
  std::optional<AliasAnalysisKind> alias_analysis() const;
  int def_count() const;
  int def_and_impl_count() const;

  // Whether the schema marks an argument as written (Tensor(a!)); false without a schema.
  bool writes_arguments() const { return writes_arguments_.load(std::memory_order_relaxed); }

  // Note [Autograd fallback fast path]
  // An operator without an Autograd kernel (a vendor's, a factory) gets the autograd plugin's
  // boxed fallback on the Autograd keys. Most calls give it nothing to do: no tensor argument
  // has autograd state (so none requires grad), and nothing is written (so no version to
  // bump). Boxing such a call to find that out would cost more than the call, and so would a
  // second table lookup. Instead the fallback's keys are left out of key_mask() as a
  // fallthrough's are, and kept in autograd_fallback_keys(): a call computes its key set with
  // key_mask() as any call does, and only when autograd_fallback_keys() is not empty (one load
  // and a branch, not taken for an operator with an Autograd kernel) checks its arguments
  // (detail::call_key_mask in dispatcher.h, and its boxed form in boxed_call.cpp) and
  // adds the fallback's keys back if a tensor has autograd state or the schema writes an
  // argument. The fallback gives the same answer for the calls that skip it, so the shortcut is
  // unobservable, except in a trace, which shows the hop the call took.
  // Both masks a call reads, from one load (so never from two states of the table).
  struct Masks {
    // Runtime keys whose entry is neither a fallthrough nor the autograd fallback.
    DispatchKeySet key_mask;
    // Runtime keys whose entry is the autograd fallback (KernelFunction::is_autograd_fallback).
    DispatchKeySet autograd_fallback_keys;
  };
  Masks masks() const {
    const uint64_t m = masks_.load(std::memory_order_relaxed);
    return {DispatchKeySet::from_raw(m & kLowHalf), DispatchKeySet::from_raw(m >> 32)};
  }
  DispatchKeySet key_mask() const { return masks().key_mask; }
  DispatchKeySet autograd_fallback_keys() const { return masks().autograd_fallback_keys; }
  // The kernel serving a (masked) key set. Never null: missing entries hold a kernel that
  // reports the error.
  const KernelFunction& lookup(DispatchKeySet ks) const {
    return *table_[ks.index()].load(std::memory_order_acquire);
  }

  bool has_kernel_for_dispatch_key(DispatchKey k) const;
  // Canonical state and computed table, in PyTorch's formats.
  std::string dump_state() const;
  std::string dump_computed_table() const;
  // Throws Error naming the broken invariant, with the state and table.
  void check_invariants() const;
  // Keys (ascending) whose computed entry serves calls, as in the missing-kernel error.
  std::string available_keys() const;
  // Throws Error when `sig` is not the operator's C++ signature: that of its unboxed kernels
  // or, without any, the one its schema implies (`inferred` is Sig's inferred schema).
  void check_signature(const CppSignature& sig, const std::string& inferred) const;
  // Where the kernel serving runtime key `k` was registered and why it serves `k`
  // (dump_computed_table()'s words: "kernel", "math kernel", ...), for dispatch observers.
  // `looked_up` is the entry a call ran; if registrations replaced it since, debug says so.
  // Takes the dispatcher's registration mutex.
  struct Origin {
    std::string debug;
    const char* source;
  };
  Origin origin_of(DispatchKey k, const KernelFunction& looked_up) const;

  // Throws NotImplementedError (or, for Undefined, Error) for a call that found no kernel.
  [[noreturn]] void report_missing(DispatchKeySet ks) const;

 private:
  friend class Dispatcher;
  using KernelList = std::list<std::shared_ptr<AnnotatedKernel>>;

  // The first def's schema becomes the operator's; the last def's removal unpublishes it and
  // returns its owner, for the dispatcher to retire.
  void publish_schema(FunctionSchema schema) OPD_REQUIRES(detail::registration_mutex);
  std::shared_ptr<void> unpublish_schema() OPD_REQUIRES(detail::registration_mutex);

  // The C++ signature of the first unboxed kernel, with its key and debug, if any.
  struct SignatureSource {
    CppSignature signature;
    DispatchKey key;
    const std::string* debug;
  };
  std::optional<SignatureSource> cpp_signature() const OPD_REQUIRES(detail::registration_mutex);
  const std::string& schema_debug_locked() const OPD_REQUIRES(detail::registration_mutex);
  // Sets tags_ from the active def, after defs_ changed.
  void publish_tags() OPD_REQUIRES(detail::registration_mutex);
  std::string dump_state_locked() const OPD_REQUIRES(detail::registration_mutex);
  std::string dump_computed_table_locked() const OPD_REQUIRES(detail::registration_mutex);
  void check_invariants_locked() const OPD_REQUIRES(detail::registration_mutex);

  struct Computed {
    const KernelFunction* kernel;
    const std::string* debug;
    KernelSource source;
  };
  Computed compute_entry(DispatchKey k, const Dispatcher& d) const
      OPD_REQUIRES(detail::registration_mutex);
  // Recomputes every table entry and the key mask from the kernels and backend fallbacks.
  void update_table(const Dispatcher& d) OPD_REQUIRES(detail::registration_mutex);
  // Recomputes the entries a registration to `registered` can affect.
  void update_table_for(const Dispatcher& d, DispatchKey registered)
      OPD_REQUIRES(detail::registration_mutex);
  void update_entries(const Dispatcher& d, DispatchKeySet keys, bool undefined)
      OPD_REQUIRES(detail::registration_mutex);
  const KernelList& kernels(DispatchKey k) const OPD_REQUIRES(detail::registration_mutex) {
    return kernels_[static_cast<int>(k)];
  }
  KernelList& kernels(DispatchKey k) OPD_REQUIRES(detail::registration_mutex) {
    return kernels_[static_cast<int>(k)];
  }

  OperatorName name_;
  struct DefRecord {
    std::string debug;
    std::shared_ptr<void> owner;
    TagSet tags;
    // nullopt: the def gave none (CONSERVATIVE, dumped as the default).
    std::optional<AliasAnalysisKind> alias_analysis;
  };
  // Published under the registration mutex; read without it by calls (argument checks, boxed
  // kernels reading op.schema()). Removing the last def unpublishes it and retires its owner,
  // so a call already running keeps a valid schema until it returns (Note [Kernel
  // reclamation]); calling the operator after that is undefined (as in PyTorch).
  std::atomic<const FunctionSchema*> schema_{nullptr};
  std::atomic<bool> writes_arguments_{false};  // of the published schema
  // The active (newest) def's tags, as schema_debug_locked() is its debug; read without the
  // mutex by has_tag.
  std::atomic<uint32_t> tags_{0};
  std::shared_ptr<FunctionSchema> schema_owner_ OPD_GUARDED_BY(detail::registration_mutex);
  // Newest first. More than one only while a plugin is being reloaded: both versions def the
  // operator with the same schema. INVARIANT: schema_ is set iff defs_ is not empty.
  std::list<DefRecord> defs_ OPD_GUARDED_BY(detail::registration_mutex);
  int def_and_impl_count_ OPD_GUARDED_BY(detail::registration_mutex) = 0;
  // Per registered key (runtime or alias), newest first. INVARIANT: no list for Undefined.
  std::array<KernelList, kNumDispatchKeys> kernels_ OPD_GUARDED_BY(detail::registration_mutex);
  // table_[k] serves runtime key k (0: Undefined). Points into kernels_, the dispatcher's
  // fallbacks or the static missing kernel.
  std::array<std::atomic<const KernelFunction*>, kNumRuntimeEntries> table_;
  // Masks::key_mask in the low half, Masks::autograd_fallback_keys in the high half: one word,
  // so that a call reads both from the same update (Note [Autograd fallback fast path]).
  static constexpr uint64_t kLowHalf = 0xffffffffu;
  static_assert(kNumRuntimeEntries <= 32, "two runtime key sets must fit in masks_");
  std::atomic<uint64_t> masks_;
};

}  // namespace opd
