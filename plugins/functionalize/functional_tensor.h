#pragma once
// Functional tensors: what the Functionalize layer wraps (Note [Functional tensors]).

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "opd/local_dispatch_key_set.h"
#include "opd/tensor.h"

namespace opd::functionalize {

// Note [Functional tensors]
// As PyTorch's FunctionalTensorWrapper and FunctionalStorageImpl, without subclassing
// TensorImpl: a TensorImpl's destructor must live in libopd_core.so (intrusive_ptr_target),
// and this plugin can be unloaded while its tensors live. A functional tensor is an ordinary
// TensorImpl carrying the Functionalize key, whose Storage borrows the memory of the tensor it
// wraps (so that its data reads as the current value) and whose storage `owner` is a
// StorageOwner made by make_plugin_shared: that keeps the plugin mapped until the last
// functional tensor is gone (Note [Plugin self reference], Note [Storage ownership]), and holds
//   - the wrapped tensor whose memory the Storage borrows (alive as long as the Storage), and
//   - the FunctionalState: the current value, the view metas that make it from its base, the
//     generation it last synced to, and the FunctionalStorage shared with every alias.
// Values are never written in place: a mutation replaces the value (add_ becomes add) and queues
// the new value, with the view metas of the tensor mutated, on the FunctionalStorage; every
// other alias, when next used, finds its generation behind, replays the queue onto the base
// (each view's inverse: select_scatter for select, ...) and regenerates its value from the new
// base by its own view metas. One thread uses a functional tensor at a time, as in PyTorch.
// Reading a functional tensor's memory directly (repr, tolist, numpy: no operator) shows its
// value as of its last sync; any operator on it syncs it first.
// Autograd runs above this layer, on the functional tensors: a view shares its base's version
// counter and a functionalized in-place operator bumps it, so autograd refreshes the views of a
// changed base, and a view that requires grad is made again from its base right after its own
// mutation, so that its geometry stays relative to the base, which autograd's CopySlices reads.

// How one view was made from its base, and how to write a changed view back into the base.
struct ViewMeta {
  std::function<Tensor(const Tensor& base)> forward;
  std::function<Tensor(const Tensor& base, const Tensor& mutated_view)> reverse;
};

// What every alias of one base shares: the base's value and the updates not yet applied to it.
class FunctionalStorage {
 public:
  explicit FunctionalStorage(Tensor base) : base_(std::move(base)) {}
  // Queues `value`, the new value of the alias that `metas` make from the base.
  void add_update(Tensor value, std::vector<ViewMeta> metas);
  // Applies the queued updates to the base, oldest first. REQUIRES: Functionalize excluded.
  void apply_updates();
  const Tensor& base() const { return base_; }
  uint64_t generation() const { return generation_; }

 private:
  struct Update {
    Tensor value;
    std::vector<ViewMeta> metas;
  };
  Tensor base_;
  std::vector<Update> updates_;
  uint64_t generation_ = 0;  // bumped by each add_update
};

struct FunctionalState {
  Tensor value;
  std::vector<ViewMeta> metas;  // from storage->base() to value; empty for a base
  uint64_t generation = 0;
  std::shared_ptr<FunctionalStorage> storage;
};

// Whether `t` is a functional tensor of this load of the plugin.
bool is_functional(const Tensor& t);
// `t`'s state. REQUIRES: is_functional(t).
FunctionalState& state_of(const Tensor& t);
// A new functional tensor over `value`, a base of its own. REQUIRES: value is not functional.
Tensor to_functional(const Tensor& value);
// A functional tensor for `state` (a view of an existing base) sharing `version` (the version
// counter of the tensor it views, so that autograd sees a mutation of either as of both).
Tensor make_functional(std::shared_ptr<FunctionalState> state,
                       const intrusive_ptr<VersionCounter>& version);
// Brings `t`'s value up to date with every mutation made through its aliases (PyTorch's sync_).
// A no-op on a tensor that is not functional.
void sync(const Tensor& t);
// `t`'s current value, synced. REQUIRES: is_functional(t).
Tensor value_of(const Tensor& t);
// The mutation of functional `t` to `new_value` (PyTorch's replace_ then commit_update): the
// value is replaced and the update queued for its aliases. REQUIRES: t synced.
void replace_and_commit(const Tensor& t, const Tensor& new_value);

// Whether views made now are replayed as views (remove="mutations") or as copies
// (remove="mutations_and_views"): this thread's setting (PyTorch's reapply_views TLS).
bool reapply_views();
// Sets it; returns the previous setting. REQUIRES: claim_thread_state() ran.
bool set_reapply_views(bool reapply);
// Claims the plugin's thread-state slot; called from the plugin's body.
void claim_thread_state();

// Excludes Functionalize and the layers above it for the scope: calls made on unwrapped values
// go to the layers below (PyTorch's AutoDispatchSkipFunctionalize; the autograd layer already
// ran on the functional tensors).
class ExcludeFunctionalize {
 public:
  ExcludeFunctionalize();

 private:
  ExcludeDispatchKeyGuard guard_;
};

}  // namespace opd::functionalize
