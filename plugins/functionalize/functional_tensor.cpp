#include "functionalize/functional_tensor.h"

#include <utility>

#include "opd/plugin.h"
#include "opd/plugin_object.h"
#include "opd/plugin_thread_state.h"

namespace opd::functionalize {
namespace {

// The storage owner of a functional tensor (Note [Functional tensors]).
struct StorageOwner {
  std::shared_ptr<FunctionalState> state;
  Tensor borrowed;  // the value whose memory the Storage points into
};

// Marks this plugin's storages: their deleter_ctx (they have no deleter) is its address.
constexpr char kStorageTag = 0;

struct ThreadState {
  bool copy_views;  // zero on a new thread: views are replayed as views
};
PluginThreadState<ThreadState> g_thread_state;

Storage borrowing_storage(std::shared_ptr<FunctionalState> state, const Tensor& value) {
  const Storage& inner = value.storage();
  auto owner =
      make_plugin_shared(new StorageOwner{std::move(state), value}, this_plugin_reference());
  return Storage::create(inner.data(), inner.nbytes(), value.device(), nullptr,
                         const_cast<char*>(&kStorageTag), std::move(owner),
                         /*resizable=*/false);
}

StorageOwner* owner_of(const Tensor& t) {
  return static_cast<StorageOwner*>(t.storage().owner().get());
}

// Points `t`'s storage and geometry at its state's value, if they point elsewhere.
void mirror_value(const Tensor& t) {
  StorageOwner* owner = owner_of(t);
  const Tensor& value = owner->state->value;
  TensorImpl* impl = t.unsafe_get_impl();
  if (owner->borrowed.is_same(value) && impl->sizes().equals(value.sizes()) &&
      impl->strides().equals(value.strides()) && impl->storage_offset() == value.storage_offset()) {
    return;
  }
  impl->set_storage_and_geometry(borrowing_storage(owner->state, value), value.sizes(),
                                 value.strides(), value.storage_offset());
}

}  // namespace

void FunctionalStorage::add_update(Tensor value, std::vector<ViewMeta> metas) {
  updates_.push_back(Update{std::move(value), std::move(metas)});
  ++generation_;
}

void FunctionalStorage::apply_updates() {
  for (Update& u : updates_) {
    if (u.metas.empty()) {
      base_ = std::move(u.value);
      continue;
    }
    // The intermediate views base -> ... -> the mutated view's base, then the new value written
    // back through each view's inverse, innermost first.
    std::vector<Tensor> bases{base_};
    for (size_t i = 0; i + 1 < u.metas.size(); ++i) {
      bases.push_back(u.metas[i].forward(bases.back()));
    }
    Tensor t = std::move(u.value);
    for (size_t i = u.metas.size(); i-- > 0;) t = u.metas[i].reverse(bases[i], t);
    base_ = std::move(t);
  }
  updates_.clear();
}

bool is_functional(const Tensor& t) {
  if (!t.defined() || !t.key_set().has(DispatchKey::Functionalize)) return false;
  const StorageImpl* s = t.storage().unsafe_get_impl();
  return s != nullptr && s->deleter() == nullptr && s->deleter_ctx() == &kStorageTag;
}

FunctionalState& state_of(const Tensor& t) { return *owner_of(t)->state; }

Tensor make_functional(std::shared_ptr<FunctionalState> state,
                       const intrusive_ptr<VersionCounter>& version) {
  const Tensor value = state->value;
  Storage storage = borrowing_storage(std::move(state), value);
  // make_tensor checks the geometry; a view is remade to share `version`.
  Tensor t = make_tensor(storage, value.sizes(), value.strides(), value.storage_offset(),
                         value.scalar_type(), value.device());
  if (version) {
    t = Tensor(make_intrusive<TensorImpl>(std::move(storage), value.sizes(), value.strides(),
                                          value.storage_offset(), value.scalar_type(),
                                          value.device(), version));
  }
  TensorImpl* impl = t.unsafe_get_impl();
  impl->unsafe_set_key_set(value.key_set().add(DispatchKey::Functionalize));
  impl->set_wrapped_number(value.unsafe_get_impl()->is_wrapped_number());
  return t;
}

Tensor to_functional(const Tensor& value) {
  OPD_INTERNAL_ASSERT(!is_functional(value), "to_functional: already functional");
  auto state = make_plugin_shared(new FunctionalState, this_plugin_reference());
  state->value = value;
  state->storage = make_plugin_shared(new FunctionalStorage(value), this_plugin_reference());
  return make_functional(std::move(state), nullptr);
}

namespace {
// Applies the storage's updates and makes s's value again from the base.
void regenerate(FunctionalState& s) {
  ExcludeFunctionalize below;
  s.storage->apply_updates();
  Tensor v = s.storage->base();
  for (const ViewMeta& m : s.metas) v = m.forward(v);
  s.value = std::move(v);
  s.generation = s.storage->generation();
}
}  // namespace

void sync(const Tensor& t) {
  if (!is_functional(t)) return;
  FunctionalState& s = state_of(t);
  if (s.generation != s.storage->generation()) regenerate(s);
  mirror_value(t);
}

Tensor value_of(const Tensor& t) {
  sync(t);
  return state_of(t).value;
}

void replace_and_commit(const Tensor& t, const Tensor& new_value) {
  FunctionalState& s = state_of(t);
  s.value = new_value;
  s.storage->add_update(new_value, s.metas);
  s.generation = s.storage->generation();
  // A view that requires grad keeps its geometry relative to its base: the autograd kernel of
  // the in-place operator reads it when it rebases the base's history (CopySlices), and the new
  // value (add's result for add_) has a geometry of its own. Made again from the updated base,
  // the view's value is a view of it as before. Other views stay lazy. (requires_grad() is a
  // CompositeImplicitAutograd operator: with the autograd keys excluded it reaches this
  // plugin's fallback, which runs it on `t` itself.)
  if (!s.metas.empty() && t.unsafe_get_impl()->autograd_meta() && t.requires_grad()) {
    regenerate(s);
  }
  mirror_value(t);
}

bool reapply_views() { return !g_thread_state.get().copy_views; }

bool set_reapply_views(bool reapply) {
  ThreadState& ts = g_thread_state.get();
  const bool previous = !ts.copy_views;
  ts.copy_views = !reapply;
  return previous;
}

void claim_thread_state() { g_thread_state.claim("functionalize"); }

ExcludeFunctionalize::ExcludeFunctionalize()
    : guard_(kAutogradKeySet | DispatchKeySet(DispatchKey::ADInplaceOrView) |
             DispatchKeySet(DispatchKey::Functionalize)) {}

}  // namespace opd::functionalize
