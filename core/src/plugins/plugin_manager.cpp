#include "opd/plugin_manager.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "dispatch/registration_context.h"
#include "logging.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/thread_annotations.h"
#include "plugins/plugin_library.h"
#include "plugins/plugin_manifest.h"
#include "plugins/plugin_residency.h"
#include "plugins/plugin_search.h"

namespace fs = std::filesystem;

namespace opd {

const char* to_string(PluginState s) {
  switch (s) {
    case PluginState::Available:
      return "available";
    case PluginState::Loaded:
      return "loaded";
    case PluginState::Unavailable:
      return "unavailable";
    case PluginState::Failed:
      return "failed";
    case PluginState::Unloading:
      return "unloading";
    case PluginState::Unloaded:
      return "unloaded";
    case PluginState::Resident:
      return "resident";
    case PluginState::Loading:
      return "loading";
  }
  return "?";
}

namespace {

// A plugin the manager has seen. Every field is guarded by `mutex`: list() and status() read
// records without the manager's life-cycle mutex, and the library's closing writes `state` and
// `reason` from whichever thread drops its last reference. Only the holder of the life-cycle
// mutex writes the other fields.
struct Record {
  Mutex mutex;
  PluginState state OPD_GUARDED_BY(mutex) = PluginState::Available;
  std::string reason OPD_GUARDED_BY(mutex);
  uint64_t generation OPD_GUARDED_BY(mutex) = 0;  // bumped by every load and reload
  PluginManifest manifest OPD_GUARDED_BY(mutex);
  // The manager's reference while loaded (null otherwise); registrations_owned_by's key.
  std::shared_ptr<LibraryOwner> owner OPD_GUARDED_BY(mutex);
  // In the library: valid while `owner` is set.
  const opd_plugin_info* info OPD_GUARDED_BY(mutex) = nullptr;
  // The library's, copied (status must not read it late).
  std::string version OPD_GUARDED_BY(mutex);
  uint64_t served_keys OPD_GUARDED_BY(mutex) = 0;  // bit k: DispatchKey k (opd_plugin_context)
};

PluginState state_of(Record& r) {
  MutexLock lock(r.mutex);
  return r.state;
}

void set_state(Record& r, PluginState s, std::string reason = {}) {
  MutexLock lock(r.mutex);
  r.state = s;
  r.reason = std::move(reason);
}

std::vector<DispatchKey> keys_of(uint64_t bits) {
  std::vector<DispatchKey> out;
  for (int k = 0; k < kNumDispatchKeys; ++k) {
    if (bits & (uint64_t{1} << k)) out.push_back(static_cast<DispatchKey>(k));
  }
  return out;
}

// What a successful registration leaves: the library's owner and what it registered.
struct Registered {
  std::shared_ptr<LibraryOwner> owner;  // null when the plugin reported itself unavailable
  const opd_plugin_info* info = nullptr;
  uint64_t served_keys = 0;
  std::string unavailable_reason;
};

}  // namespace

struct PluginManager::Impl {
  // Serialises loads, unloads and reloads (recursive: loads load what they require). Held while
  // plugin code runs; list() and status() never take it.
  std::recursive_mutex mutex;
  Mutex records_mutex;  // guards `records` (the map; each Record guards itself)
  std::map<std::string, std::shared_ptr<Record>> records OPD_GUARDED_BY(records_mutex);

  std::vector<fs::path> dirs() { return plugin_search_dirs(); }

  std::vector<PluginManifest> scan(const std::string& want = {}) {
    return scan_manifests(dirs(), want);
  }

  PluginManifest find(const std::string& name_or_manifest) {
    return find_manifest(name_or_manifest);
  }

  // The record of `m`'s plugin, made if new; takes `m` as its manifest unless it is loaded (or
  // being loaded) from another.
  std::shared_ptr<Record> record_for(const PluginManifest& m) {
    std::shared_ptr<Record> r;
    {
      MutexLock lock(records_mutex);
      auto& slot = records[m.plugin];
      if (!slot) slot = std::make_shared<Record>();
      r = slot;
    }
    MutexLock lock(r->mutex);
    if (!r->owner && r->state != PluginState::Loading) r->manifest = m;
    return r;
  }

  std::shared_ptr<Record> find_record(const std::string& name) {
    MutexLock lock(records_mutex);
    auto it = records.find(name);
    return it == records.end() ? nullptr : it->second;
  }

  std::vector<std::shared_ptr<Record>> all_records() {
    MutexLock lock(records_mutex);
    std::vector<std::shared_ptr<Record>> out;
    for (auto& [name, r] : records) out.push_back(r);
    return out;
  }

  // `r` now serves from the library `reg` registered (a load's or a reload's).
  static void set_loaded(Record& r, Registered reg) OPD_REQUIRES(r.mutex) {
    r.info = reg.info;
    r.version = reg.info->version;
    r.served_keys = reg.served_keys;
    r.owner = std::move(reg.owner);
    r.state = PluginState::Loaded;
    r.reason.clear();
  }

  static PluginStatus status_of(Record& r) {
    PluginStatus s;
    std::shared_ptr<LibraryOwner> owner;
    {
      MutexLock lock(r.mutex);
      s.name = r.manifest.plugin;
      s.version = r.version.empty() ? r.manifest.version : r.version;
      s.state = r.state;
      s.reason = r.reason;
      s.dispatch_keys = r.manifest.dispatch_keys;
      s.served_keys = keys_of(r.served_keys);
      s.requires_ = r.manifest.requires_;
      s.load_default = r.manifest.load_default;
      s.description = r.manifest.description;
      s.manifest = r.manifest.path.string();
      s.library = r.manifest.library.string();
      owner = r.owner;
    }
    // Outside r.mutex: dropping `owner` may close the library, which locks it.
    if (owner) s.registrations = Dispatcher::singleton().registrations_owned_by(owner.get());
    return s;
  }

  // Opens, checks and registers a plugin library (`replaces`: the owner of the version a reload
  // replaces). Returns the owner of the library with its registrations in place, or no owner and
  // the reason when the plugin reported itself unavailable. Throws PluginError for everything
  // else, leaving nothing registered.
  Registered open_and_register(const PluginManifest& m, bool private_copy, const void* replaces) {
    if (m.abi != OPD_PLUGIN_ABI_MAJOR) {
      throw PluginError(
          fmt::format("{}: the manifest says plugin ABI {}, but this opdispatch supports ABI {}",
                      m.where("abi"), m.abi, OPD_PLUGIN_ABI_MAJOR));
    }
    // Before the library is mapped: its static initialisers may start threads too.
    std::set<pid_t> threads_before = process_threads();
    auto lib = open_checked_library(m, private_copy);
    const opd_plugin_info& info = lib->entry();
    if (m.plugin != info.name) {
      throw PluginError(fmt::format("{}: the manifest names plugin '{}' but the library is '{}'",
                                    m.where("plugin"), m.plugin, info.name));
    }
    std::shared_ptr<LibraryOwner> owner = own_library(
        std::move(lib), reinterpret_cast<const void*>(info.register_fn), std::move(threads_before));
    opd_plugin_context ctx;
    ctx.suffix = fmt::format(" (plugin {} {})", info.name, info.version);
    ctx.owner = owner;
    ctx.replaces = replaces;
    ctx.plugin = m.plugin;
    ctx.declared_keys = m.dispatch_keys;
    ctx.any_privateuse_slot = m.any_privateuse_slot;
    opd_plugin_status status;
    {
      detail::ScopedRegistrationContext scope(&ctx);
      status = info.register_fn(&ctx);
    }
    registration_ran(*owner, process_threads());
    ctx.owner.reset();
    if (status == OPD_PLUGIN_OK) return {std::move(owner), &info, ctx.served_keys, {}};
    Dispatcher& d = Dispatcher::singleton();
    if (size_t left = d.registrations_owned_by(owner.get()); left > 0) {
      // A misbehaving plugin: make it clean up through its shutdown callback.
      if (info.shutdown_fn) info.shutdown_fn();
      left = d.registrations_owned_by(owner.get());
      if (left > 0) {
        throw PluginError(fmt::format(
            "{}: registration failed ({}) and the plugin left {} registrations behind; it stays "
            "resident",
            m.library.string(), ctx.message, left));
      }
    }
    d.reclaim();  // its undone kernels hold references on the library
    if (status == OPD_PLUGIN_UNAVAILABLE) {
      return {nullptr, nullptr, 0,
              ctx.message.empty() ? "the plugin reported itself unavailable" : ctx.message};
    }
    throw PluginError(fmt::format("{}: registration failed: {}", m.library.string(),
                                  ctx.message.empty() ? "(no message)" : ctx.message));
  }

  PluginStatus load(const PluginManifest& m, std::vector<std::string>& chain) {
    std::shared_ptr<Record> rp = record_for(m);
    Record& r = *rp;
    PluginState state = state_of(r);
    if (state == PluginState::Loaded) return status_of(r);
    // Only this thread can see it loading: it holds the life-cycle mutex.
    if (state == PluginState::Loading) {
      throw PluginError(fmt::format(
          "plugin '{}' is already being loaded (re-entrant load from its own registration)",
          m.plugin));
    }
    if (std::find(chain.begin(), chain.end(), m.plugin) != chain.end()) {
      std::string cycle;
      for (const auto& c : chain) cycle += c + " -> ";
      throw PluginError(
          fmt::format("{}: circular requires: {}{}", m.path.string(), cycle, m.plugin));
    }
    chain.push_back(m.plugin);
    {
      MutexLock lock(r.mutex);
      r.manifest = m;
      r.state = PluginState::Loading;
      r.reason.clear();
    }
    try {
      for (const std::string& dep : m.requires_) {
        PluginStatus s;
        try {
          s = load(find(dep), chain);
        } catch (const PluginError& e) {
          throw PluginError(fmt::format("{}: requires plugin '{}', which could not be loaded: {}",
                                        m.where("requires"), dep, e.msg()));
        }
        if (s.state != PluginState::Loaded) {
          throw PluginError(fmt::format("{}: requires plugin '{}', which is {}: {}",
                                        m.where("requires"), dep, to_string(s.state), s.reason));
        }
      }
      Registered reg = open_and_register(m, /*private_copy=*/false, nullptr);
      if (!reg.owner) {
        set_state(r, PluginState::Unavailable, reg.unavailable_reason);
      } else {
        // Watch first: it retires the closing callback of any earlier library of this record.
        watch(rp, *reg.owner);
        MutexLock lock(r.mutex);
        set_loaded(r, std::move(reg));
      }
    } catch (const PluginError& e) {
      set_state(r, PluginState::Failed, e.msg());
      chain.pop_back();
      throw;
    }
    chain.pop_back();
    return status_of(r);
  }

  // Records the library's closing (or its being kept mapped) in `r`, unless a newer load or
  // reload replaced it.
  static void watch(const std::shared_ptr<Record>& r, LibraryOwner& owner) {
    uint64_t generation;
    {
      MutexLock lock(r->mutex);
      generation = ++r->generation;
    }
    std::weak_ptr<Record> weak = r;
    auto closed = [weak, generation](bool resident, const std::string& reason) {
      auto rec = weak.lock();
      if (!rec) return;
      MutexLock lock(rec->mutex);
      if (rec->generation != generation || rec->state != PluginState::Unloading) return;
      rec->state = resident ? PluginState::Resident : PluginState::Unloaded;
      rec->reason = reason;
      rec->info = nullptr;
    };
    owner.library->on_closed(closed);
    owner.on_kept = closed;
  }

  // Drops the manager's reference on a deregistered library. It does not wait for calls in
  // flight: what they may still use (replaced kernels, the plugin's self reference) is freed by
  // the dispatcher once they have returned (Note [Kernel reclamation]), at this reclaim when no
  // call is running, else at a later one (status() and list() reclaim).
  static void release(Record& r, std::shared_ptr<LibraryOwner> owner) {
    Dispatcher::singleton().reclaim();
    long others = owner.use_count() - 1;
    owner.reset();
    if (others > 0) {
      MutexLock lock(r.mutex);
      if (r.state == PluginState::Unloading) {
        r.reason = fmt::format(
            "deregistered; the library stays mapped until {} object(s) it made (storages, "
            "kernels still running) are gone",
            others);
      }
    }
  }

  PluginStatus unload(const std::string& name, bool cascade) {
    std::shared_ptr<Record> rp = find_record(name);
    bool loaded = false;
    if (rp) {
      MutexLock lock(rp->mutex);
      loaded = rp->owner != nullptr;
    }
    if (!loaded) {
      throw PluginError(
          fmt::format("cannot unload plugin '{}': it is not loaded{}", name,
                      rp ? fmt::format(" (state {})", to_string(state_of(*rp))) : std::string()));
    }
    Record& r = *rp;
    for (const auto& rec : all_records()) {
      std::string other;
      {
        MutexLock lock(rec->mutex);
        const auto& reqs = rec->manifest.requires_;
        if (!rec->owner || std::find(reqs.begin(), reqs.end(), name) == reqs.end()) continue;
        other = rec->manifest.plugin;
      }
      if (!cascade) {
        throw PluginError(fmt::format(
            "cannot unload plugin '{}': the loaded plugin '{}' requires it; unload '{}' first, "
            "or unload with cascade",
            name, other, other));
      }
      unload(other, true);
    }
    std::shared_ptr<LibraryOwner> owner;
    const opd_plugin_info* info;
    {
      MutexLock lock(r.mutex);
      owner = std::move(r.owner);
      info = r.info;
      r.served_keys = 0;
      r.state = PluginState::Unloading;
      r.reason.clear();
    }
    if (info && info->shutdown_fn) info->shutdown_fn();
    if (size_t left = Dispatcher::singleton().registrations_owned_by(owner.get()); left > 0) {
      logger()->error("plugin {}: shutdown left {} registrations behind", name, left);
      set_state(
          r, PluginState::Resident,
          fmt::format("shutdown left {} registrations behind; the library stays mapped", left));
    }
    release(r, std::move(owner));
    return status_of(r);
  }

  PluginStatus reload(const std::string& name) {
    std::shared_ptr<Record> rp = find_record(name);
    std::shared_ptr<LibraryOwner> old;
    const opd_plugin_info* old_info = nullptr;
    fs::path manifest_path;
    if (rp) {
      MutexLock lock(rp->mutex);
      old = rp->owner;
      old_info = rp->info;
      manifest_path = rp->manifest.path;
    }
    if (!old) throw PluginError(fmt::format("cannot reload plugin '{}': it is not loaded", name));
    Record& r = *rp;
    PluginManifest m = read_manifest(manifest_path);
    // The new version registers on top of the old one (newest kernel wins), then the old one
    // is deregistered: a call at any moment finds one of the two.
    Registered reg = open_and_register(m, /*private_copy=*/true, old.get());
    if (!reg.owner) {
      throw PluginError(fmt::format("cannot reload plugin '{}': the new version is unavailable: {}",
                                    name, reg.unavailable_reason));
    }
    if (old_info->shutdown_fn) old_info->shutdown_fn();
    watch(rp, *reg.owner);
    {
      MutexLock lock(r.mutex);
      r.manifest = m;
      set_loaded(r, std::move(reg));
    }
    release(r, std::move(old));
    return status_of(r);
  }
};

PluginManager::PluginManager() : impl_(std::make_unique<Impl>()) {}

PluginManager& plugins() {
  static PluginManager* m = new PluginManager();  // never destroyed, like the dispatcher
  return *m;
}

std::vector<std::string> PluginManager::search_path() {
  std::vector<std::string> out;
  for (const auto& d : impl_->dirs()) out.push_back(d.string());
  return out;
}

// list() and status() do not take the life-cycle mutex (a registration may wait on a thread
// that calls them); they see a plugin being loaded as `loading`.
std::vector<PluginStatus> PluginManager::list() {
  Dispatcher::singleton().reclaim();
  for (auto& m : impl_->scan()) impl_->record_for(m);
  std::vector<PluginStatus> out;
  for (const auto& r : impl_->all_records()) out.push_back(Impl::status_of(*r));
  return out;
}

PluginStatus PluginManager::load(const std::string& name_or_manifest) {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> chain;
  return impl_->load(impl_->find(name_or_manifest), chain);
}

std::vector<PluginStatus> PluginManager::load_default() {
  std::lock_guard lock(impl_->mutex);
  std::vector<PluginStatus> out;
  for (auto& m : impl_->scan()) {
    if (!m.load_default) continue;
    try {
      std::vector<std::string> chain;
      out.push_back(impl_->load(m, chain));
    } catch (const PluginError& e) {
      logger()->warn("{}", e.msg());
      out.push_back(Impl::status_of(*impl_->record_for(m)));
    }
  }
  return out;
}

PluginStatus PluginManager::unload(const std::string& name, bool cascade) {
  std::lock_guard lock(impl_->mutex);
  return impl_->unload(name, cascade);
}

PluginStatus PluginManager::reload(const std::string& name) {
  std::lock_guard lock(impl_->mutex);
  return impl_->reload(name);
}

PluginStatus PluginManager::status(const std::string& name) {
  Dispatcher::singleton().reclaim();
  if (std::shared_ptr<Record> r = impl_->find_record(name)) return Impl::status_of(*r);
  for (auto& m : impl_->scan()) {
    if (m.plugin == name) return Impl::status_of(*impl_->record_for(m));
  }
  throw PluginError(fmt::format("no plugin named '{}' is known", name));
}

}  // namespace opd
