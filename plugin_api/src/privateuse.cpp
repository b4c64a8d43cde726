// Claims of the vendor slots (Note [Vendor slots] in opd/privateuse.h).

#include "opd/privateuse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "dispatch/registration_context.h"
#include "opd/error.h"
#include "privateuse_slots.h"

namespace opd {
namespace {

using detail::default_privateuse_name;
using detail::kNumPrivateUseSlots;
using detail::privateuse_slot_at;
using detail::privateuse_slots;
using detail::PrivateUseSlot;
using detail::PrivateUseSlots;

std::string slot_label(int i) { return fmt::format("PrivateUse{}", i + 1); }

void check_name(std::string_view name) {
  OPD_CHECK_T(ValueError, !name.empty(), "register_privateuse_backend: the name is empty");
  const bool device_string = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
  });
  OPD_CHECK_T(ValueError, device_string,
              "register_privateuse_backend: '{}' cannot name a device: a device's name is "
              "letters and underscores ('{}:0' must be a device string)",
              name, name);
  for (std::string_view b : {"cpu", "cuda", "meta"}) {
    OPD_CHECK_T(ValueError, name != b,
                "register_privateuse_backend: '{}' is a built-in device (built-in devices: cpu, "
                "cuda, meta)",
                name);
  }
  for (int i = 0; i < kNumPrivateUseSlots; ++i) {
    OPD_CHECK_T(ValueError, name != default_privateuse_name(i),
                "register_privateuse_backend: '{}' is the unnamed {} slot's own name", name,
                slot_label(i));
  }
}

// The plugin being loaded on this thread, or null outside a load (the process claims).
opd_plugin_context* loading_plugin() {
  opd_plugin_context* ctx = detail::current_registration_context();
  return ctx && !ctx->plugin.empty() ? ctx : nullptr;
}

bool same_holder(const PrivateUseSlot& s, const opd_plugin_context* ctx) {
  return ctx ? s.held_by_plugin() && s.plugin == ctx->plugin
             : s.named_by_process && !s.held_by_plugin();
}

// Whether the loading plugin's manifest lets it serve slot i (Note [Declared dispatch keys]).
bool allowed(const opd_plugin_context* ctx, int i) {
  return !ctx || ctx->any_privateuse_slot ||
         detail::declared_keys_allow(ctx->declared_keys, backend_key_for(privateuse_slot_at(i)));
}

std::string holders(const PrivateUseSlots& t) OPD_REQUIRES(t.mutex) {
  std::string out;
  for (int i = 0; i < kNumPrivateUseSlots; ++i) {
    out += fmt::format("{}{} is '{}', held by {}", i ? "; " : "", slot_label(i), t.slots[i].name,
                       t.slots[i].holder());
  }
  return out;
}

std::string claimer(const opd_plugin_context* ctx) {
  return ctx ? fmt::format("plugin '{}'", ctx->plugin) : "the process";
}

// Records the claim of slot i by the loading plugin (or the process) under `name`.
void take(PrivateUseSlot& s, std::string_view name, opd_plugin_context* ctx, int i) {
  if (ctx) {
    if (s.plugin != ctx->plugin || !s.held_by_plugin()) s.loads.clear();
    std::erase_if(s.loads, [](const std::weak_ptr<void>& l) { return l.expired(); });
    s.plugin = ctx->plugin;
    s.loads.push_back(ctx->owner);
    const DispatchKey key = backend_key_for(privateuse_slot_at(i));
    if (!detail::declared_keys_allow(ctx->declared_keys, key)) ctx->declared_keys.push_back(key);
  } else {
    s.named_by_process = true;
  }
  s.name = name;
}

}  // namespace

DeviceType register_privateuse_backend(std::string_view name, std::optional<DeviceType> slot) {
  check_name(name);
  std::optional<int> wanted;
  if (slot) wanted = detail::privateuse_slot_index(*slot);
  opd_plugin_context* ctx = loading_plugin();
  PrivateUseSlots& t = privateuse_slots();
  MutexLock lock(t.mutex);
  // The name's slot, if a holder has it.
  for (int i = 0; i < kNumPrivateUseSlots; ++i) {
    PrivateUseSlot& s = t.slots[i];
    if (!s.taken() || s.name != name) continue;
    // Ours again (a reload), or the process's naming, which a plugin may serve while no other
    // plugin does.
    const bool ours = same_holder(s, ctx) || (ctx && s.named_by_process && !s.held_by_plugin());
    if (!ours) {
      throw PluginError(fmt::format(
          "register_privateuse_backend: {} cannot claim the vendor backend name '{}': {} holds "
          "it on {}",
          claimer(ctx), name, s.holder(), slot_label(i)));
    }
    if (wanted && *wanted != i) {
      throw PluginError(fmt::format(
          "register_privateuse_backend: {} claims '{}' on {}, but the name is {}'s (held by {})",
          claimer(ctx), name, slot_label(*wanted), slot_label(i), s.holder()));
    }
    if (!allowed(ctx, i)) {
      throw PluginError(fmt::format(
          "register_privateuse_backend: plugin '{}' claims '{}', which is {}'s, but its manifest "
          "does not declare {}; add {} (or PrivateUse, any free slot) to dispatch_keys",
          ctx->plugin, name, slot_label(i), slot_label(i), slot_label(i)));
    }
    take(s, name, ctx, i);
    return privateuse_slot_at(i);
  }
  if (wanted) {
    const int i = *wanted;
    PrivateUseSlot& s = t.slots[i];
    if (s.taken()) {
      throw PluginError(fmt::format(
          "register_privateuse_backend: {} cannot claim {} as '{}': {} holds it as '{}'",
          claimer(ctx), slot_label(i), name, s.holder(), s.name));
    }
    if (!allowed(ctx, i)) {
      throw PluginError(fmt::format(
          "register_privateuse_backend: plugin '{}' claims {}, which its manifest does not "
          "declare; add {} (or PrivateUse, any free slot) to dispatch_keys",
          ctx->plugin, slot_label(i), slot_label(i)));
    }
    take(s, name, ctx, i);
    return privateuse_slot_at(i);
  }
  bool any_allowed = false;
  for (int i = 0; i < kNumPrivateUseSlots; ++i) {
    if (!allowed(ctx, i)) continue;
    any_allowed = true;
    if (t.slots[i].taken()) continue;
    take(t.slots[i], name, ctx, i);
    return privateuse_slot_at(i);
  }
  if (!any_allowed) {
    throw PluginError(fmt::format(
        "register_privateuse_backend: plugin '{}' claims a vendor slot as '{}', but its "
        "manifest declares none; add PrivateUse (any free slot) or PrivateUse1..3 to "
        "dispatch_keys",
        ctx->plugin, name));
  }
  throw PluginError(
      fmt::format("register_privateuse_backend: no free vendor slot for '{}' ({}): {}", name,
                  claimer(ctx), holders(t)));
}

DeviceType claimed_privateuse_slot() {
  opd_plugin_context* ctx = loading_plugin();
  PrivateUseSlots& t = privateuse_slots();
  MutexLock lock(t.mutex);
  std::optional<int> found;
  for (int i = 0; i < kNumPrivateUseSlots; ++i) {
    const PrivateUseSlot& s = t.slots[i];
    if (!(ctx ? s.held_by_plugin() && s.plugin == ctx->plugin : s.named_by_process)) continue;
    if (found) {
      throw PluginError(fmt::format(
          "{} holds several vendor slots ({} and {}): OPD_LIBRARY_IMPL_PRIVATEUSE cannot tell "
          "which; use OPD_LIBRARY_IMPL(ns, PrivateUseN, m)",
          claimer(ctx), slot_label(*found), slot_label(i)));
    }
    found = i;
  }
  if (!found) {
    throw PluginError(fmt::format(
        "{} holds no vendor slot: call register_privateuse_backend(name) in the OPD_PLUGIN body, "
        "before the OPD_LIBRARY_IMPL_PRIVATEUSE blocks run",
        claimer(ctx)));
  }
  return privateuse_slot_at(*found);
}

std::string privateuse_slot_holder(DeviceType slot) {
  const int i = detail::privateuse_slot_index(slot);
  PrivateUseSlots& t = privateuse_slots();
  MutexLock lock(t.mutex);
  return t.slots[i].holder();
}

}  // namespace opd
