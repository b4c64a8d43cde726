#include "dispatch/registration_context.h"

#include <fmt/format.h>

#include <algorithm>

#include "opd/dispatcher.h"
#include "opd/error.h"

namespace opd {
namespace detail {
namespace {
thread_local opd_plugin_context* current = nullptr;

std::string key_list(const std::vector<DispatchKey>& keys) {
  std::string out;
  for (DispatchKey k : keys) out += (out.empty() ? "" : ", ") + std::string(to_string(k));
  return "[" + out + "]";
}
}  // namespace

opd_plugin_context* current_registration_context() { return current; }

ScopedRegistrationContext::ScopedRegistrationContext(opd_plugin_context* ctx) : previous_(current) {
  current = ctx;
}
ScopedRegistrationContext::~ScopedRegistrationContext() { current = previous_; }

// Note [Declared dispatch keys]
// A plugin's manifest lists the dispatch keys it serves, and the manager holds it to that: a
// kernel or a backend fallback registered on another key fails the load (a plugin declaring
// [CPU] must not slip a Meta kernel under aten::add). The rule, on the key as registered:
//   - a declared key allows itself, runtime or alias (Autograd, CompositeImplicitAutograd,
//     CompositeExplicitAutograd(NonFunctional) must be declared by name: an alias fills the
//     tables of every backend, so no backend key implies one);
//   - a declared backend (CPU, CUDA, PrivateUse1..3, Meta) also allows its own autograd key
//     (AutogradCPU, ...), as PyTorch's out-of-tree backends register AutogradPrivateUse1;
//   - a declared Autograd (alias) or AutogradFunctionality allows every per-backend autograd key,
//     a declared Dense every backend key.
// An impl without a key is a CompositeImplicitAutograd kernel (as the dispatcher files it), and so
// is the kernel given with def(). Defs (schemas) are not keyed and are not checked. Registrations
// outside a plugin load (executables, tests, Python) are not checked.
bool declared_keys_allow(const std::vector<DispatchKey>& declared, DispatchKey key) {
  auto has = [&](DispatchKey k) {
    return std::find(declared.begin(), declared.end(), k) != declared.end();
  };
  if (has(key)) return true;
  if (is_autograd_key(key)) {
    return has(to_runtime_key(DispatchKey::Dense, backend_of(key))) || has(DispatchKey::Autograd) ||
           has(DispatchKey::AutogradFunctionality);
  }
  if (is_backend_key(key)) return has(DispatchKey::Dense);
  return false;
}

void check_declared_key(DispatchKey key, const std::string& what) {
  opd_plugin_context* ctx = current;
  if (!ctx || ctx->plugin.empty()) return;
  if (!declared_keys_allow(ctx->declared_keys, key)) {
    throw PluginError(fmt::format(
        "plugin '{}' registers {} on dispatch key {}, which its manifest does not declare "
        "(dispatch_keys: {}); add {} to dispatch_keys if the plugin is meant to serve it",
        ctx->plugin, what, to_string(key), key_list(ctx->declared_keys), to_string(key)));
  }
  ctx->served_keys |= uint64_t{1} << static_cast<int>(key);
}

}  // namespace detail

PluginUnavailable::~PluginUnavailable() = default;

std::shared_ptr<void> current_plugin_reference() {
  auto* ctx = detail::current_registration_context();
  return ctx ? ctx->owner : nullptr;
}

// See Note [Plugin self reference] in opd/plugin.h.
void release_plugin_self_reference(std::atomic<const detail::PluginSelfReference*>* slot,
                                   const detail::PluginSelfReference* holder) noexcept {
  if (!holder) return;
  auto release = [slot](void* p) noexcept {
    auto* h = static_cast<const detail::PluginSelfReference*>(p);
    const detail::PluginSelfReference* expected = h;
    // The slot lives in the plugin, which h keeps mapped until the delete below.
    slot->compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
    delete h;
  };
  try {
    Dispatcher::singleton().release_when_quiescent(
        std::shared_ptr<void>(const_cast<detail::PluginSelfReference*>(holder), release));
  } catch (...) {
    // Out of memory for the control block or the dispatcher's list: the holder was released at
    // once (shared_ptr's contract). Nothing better is possible here.
  }
}

}  // namespace opd

extern "C" void opd_plugin_set_message(opd_plugin_context* ctx, const char* message) {
  if (ctx && message) ctx->message = message;
}
