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

#include "logging.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "plugin_library.h"
#include "plugin_manifest.h"
#include "plugin_search.h"
#include "registration_context.h"

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
  }
  return "?";
}

namespace {

// A plugin the manager has seen. `state` and `reason` are also written by the library's
// destructor, from whichever thread drops the last reference: guarded by `mutex`.
struct Record {
  std::mutex mutex;
  PluginState state = PluginState::Available;
  std::string reason;
  uint64_t generation = 0;  // bumped by every load and reload
  PluginManifest manifest;
  // The manager's reference while loaded (null otherwise).
  std::shared_ptr<PluginLibrary> library;
  const opd_plugin_info* info = nullptr;
};

PluginState state_of(Record& r) {
  std::lock_guard lock(r.mutex);
  return r.state;
}

void set_state(Record& r, PluginState s, std::string reason = {}) {
  std::lock_guard lock(r.mutex);
  r.state = s;
  r.reason = std::move(reason);
}

}  // namespace

struct PluginManager::Impl {
  std::recursive_mutex mutex;  // loads may load what they require
  std::map<std::string, std::shared_ptr<Record>> records;

  std::vector<fs::path> dirs() { return plugin_search_dirs(); }

  std::vector<PluginManifest> scan(const std::string& want = {}) {
    return scan_manifests(dirs(), want);
  }

  Record& record_for(const PluginManifest& m) {
    auto& r = records[m.plugin];
    if (!r) r = std::make_shared<Record>();
    bool live = r->library != nullptr;
    if (!live) r->manifest = m;
    return *r;
  }

  PluginManifest find(const std::string& name_or_manifest) {
    return find_manifest(name_or_manifest);
  }

  PluginStatus status_of(Record& r) {
    std::lock_guard lock(r.mutex);
    PluginStatus s;
    const PluginManifest& m = r.manifest;
    s.name = m.plugin;
    s.version = r.info && r.info->version ? r.info->version : m.version;
    s.state = r.state;
    s.reason = r.reason;
    s.dispatch_keys = m.dispatch_keys;
    s.requires_ = m.requires_;
    s.load_default = m.load_default;
    s.description = m.description;
    s.manifest = m.path.string();
    s.library = m.library.string();
    if (r.library)
      s.registrations = Dispatcher::singleton().registrations_owned_by(r.library.get());
    return s;
  }

  // Opens, checks and registers a plugin library. On success returns the library with its
  // registrations in place and sets `*info`; on `unavailable` returns null and sets
  // `unavailable_reason`.
  // Throws PluginError for everything else, leaving nothing registered.
  std::shared_ptr<PluginLibrary> open_and_register(const PluginManifest& m, bool private_copy,
                                                   const void* replaces,
                                                   const opd_plugin_info** info_out,
                                                   std::string* unavailable_reason) {
    if (m.abi != OPD_PLUGIN_ABI_MAJOR) {
      throw PluginError(
          fmt::format("{}: the manifest says plugin ABI {}, but this opdispatch supports ABI {}",
                      m.where("abi"), m.abi, OPD_PLUGIN_ABI_MAJOR));
    }
    auto lib = open_checked_library(m, private_copy);
    const opd_plugin_info& info = lib->entry();
    if (m.plugin != info.name) {
      throw PluginError(fmt::format("{}: the manifest names plugin '{}' but the library is '{}'",
                                    m.where("plugin"), m.plugin, info.name));
    }
    opd_plugin_context ctx;
    ctx.suffix = fmt::format(" (plugin {} {})", info.name, info.version);
    ctx.owner = lib;
    ctx.replaces = replaces;
    opd_plugin_status status;
    {
      detail::ScopedRegistrationContext scope(&ctx);
      status = info.register_fn(&ctx);
    }
    ctx.owner.reset();
    if (status == OPD_PLUGIN_OK) {
      *info_out = &info;
      return lib;
    }
    Dispatcher& d = Dispatcher::singleton();
    if (size_t left = d.registrations_owned_by(lib.get()); left > 0) {
      // A misbehaving plugin: make it clean up through its shutdown callback.
      if (info.shutdown_fn) info.shutdown_fn();
      left = d.registrations_owned_by(lib.get());
      if (left > 0) {
        throw PluginError(fmt::format(
            "{}: registration failed ({}) and the plugin left {} registrations behind; it stays "
            "resident",
            m.library.string(), ctx.message, left));
      }
    }
    d.reclaim();  // its undone kernels hold references on the library
    if (status == OPD_PLUGIN_UNAVAILABLE) {
      *unavailable_reason =
          ctx.message.empty() ? "the plugin reported itself unavailable" : ctx.message;
      return nullptr;
    }
    throw PluginError(fmt::format("{}: registration failed: {}", m.library.string(),
                                  ctx.message.empty() ? "(no message)" : ctx.message));
  }

  PluginStatus load(const PluginManifest& m, std::vector<std::string>& chain) {
    Record& r = record_for(m);
    if (state_of(r) == PluginState::Loaded) return status_of(r);
    if (std::find(chain.begin(), chain.end(), m.plugin) != chain.end()) {
      std::string cycle;
      for (const auto& c : chain) cycle += c + " -> ";
      throw PluginError(
          fmt::format("{}: circular requires: {}{}", m.path.string(), cycle, m.plugin));
    }
    chain.push_back(m.plugin);
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
      std::string unavailable;
      const opd_plugin_info* info = nullptr;
      auto lib = open_and_register(m, /*private_copy=*/false, nullptr, &info, &unavailable);
      if (!lib) {
        set_state(r, PluginState::Unavailable, unavailable);
      } else {
        // Watch first: it retires the closing callback of any earlier library of this record.
        watch(r, *lib);
        {
          std::lock_guard lock(r.mutex);
          r.info = info;
        }
        r.library = std::move(lib);
        set_state(r, PluginState::Loaded);
      }
    } catch (const PluginError& e) {
      set_state(r, PluginState::Failed, e.msg());
      chain.pop_back();
      throw;
    }
    chain.pop_back();
    return status_of(r);
  }

  // Records the library's closing in `r`, unless a newer load or reload replaced it.
  void watch(Record& r, PluginLibrary& lib) {
    uint64_t generation;
    {
      std::lock_guard lock(r.mutex);
      generation = ++r.generation;
    }
    std::weak_ptr<Record> weak = records[r.manifest.plugin];
    lib.on_closed([weak, generation](bool resident, const std::string& reason) {
      auto rec = weak.lock();
      if (!rec) return;
      std::lock_guard lock(rec->mutex);
      if (rec->generation != generation || rec->state != PluginState::Unloading) return;
      rec->state = resident ? PluginState::Resident : PluginState::Unloaded;
      rec->reason = reason;
      rec->info = nullptr;
    });
  }

  // Drops the manager's reference on a deregistered library after giving calls in flight a
  // moment to finish, so that replaced kernels can be freed and the library unmapped now.
  void release(Record& r, std::shared_ptr<PluginLibrary> lib) {
    Dispatcher& d = Dispatcher::singleton();
    for (int i = 0; i < 200 && lib.use_count() > 1; ++i) {
      d.reclaim();
      if (lib.use_count() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    long others = lib.use_count() - 1;
    lib.reset();
    if (others > 0) {
      std::lock_guard lock(r.mutex);
      if (r.state == PluginState::Unloading) {
        r.reason = fmt::format(
            "deregistered; the library stays mapped until {} object(s) it made (storages, "
            "kernels still running) are gone",
            others);
      }
    }
  }

  PluginStatus unload(const std::string& name, bool cascade) {
    auto it = records.find(name);
    if (it == records.end() || !it->second->library) {
      throw PluginError(fmt::format(
          "cannot unload plugin '{}': it is not loaded{}", name,
          it == records.end() ? "" : fmt::format(" (state {})", to_string(state_of(*it->second)))));
    }
    Record& r = *it->second;
    for (auto& [other, rec] : records) {
      if (!rec->library) continue;
      const auto& reqs = rec->manifest.requires_;
      if (std::find(reqs.begin(), reqs.end(), name) == reqs.end()) continue;
      if (!cascade) {
        throw PluginError(fmt::format(
            "cannot unload plugin '{}': the loaded plugin '{}' requires it; unload '{}' first, "
            "or unload with cascade",
            name, other, other));
      }
      unload(other, true);
    }
    std::shared_ptr<PluginLibrary> lib = std::move(r.library);
    set_state(r, PluginState::Unloading);
    if (r.info && r.info->shutdown_fn) r.info->shutdown_fn();
    if (size_t left = Dispatcher::singleton().registrations_owned_by(lib.get()); left > 0) {
      logger()->error("plugin {}: shutdown left {} registrations behind", name, left);
      set_state(
          r, PluginState::Resident,
          fmt::format("shutdown left {} registrations behind; the library stays mapped", left));
    }
    release(r, std::move(lib));
    return status_of(r);
  }

  PluginStatus reload(const std::string& name) {
    auto it = records.find(name);
    if (it == records.end() || !it->second->library) {
      throw PluginError(fmt::format("cannot reload plugin '{}': it is not loaded", name));
    }
    Record& r = *it->second;
    PluginManifest m = read_manifest(r.manifest.path);
    std::shared_ptr<PluginLibrary> old = r.library;
    const opd_plugin_info* old_info = r.info;
    std::string unavailable;
    const opd_plugin_info* new_info = nullptr;
    // The new version registers on top of the old one (newest kernel wins), then the old one
    // is deregistered: a call at any moment finds one of the two.
    auto lib = open_and_register(m, /*private_copy=*/true, old.get(), &new_info, &unavailable);
    if (!lib) {
      throw PluginError(fmt::format("cannot reload plugin '{}': the new version is unavailable: {}",
                                    name, unavailable));
    }
    if (old_info->shutdown_fn) old_info->shutdown_fn();
    r.manifest = m;
    r.library = lib;
    watch(r, *lib);
    {
      std::lock_guard lock(r.mutex);
      r.info = new_info;
    }
    set_state(r, PluginState::Loaded);
    old.reset();
    release(r, nullptr);
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

std::vector<PluginStatus> PluginManager::list() {
  std::lock_guard lock(impl_->mutex);
  Dispatcher::singleton().reclaim();
  for (auto& m : impl_->scan()) impl_->record_for(m);
  std::vector<PluginStatus> out;
  for (auto& [name, r] : impl_->records) out.push_back(impl_->status_of(*r));
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
      out.push_back(impl_->status_of(impl_->record_for(m)));
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
  std::lock_guard lock(impl_->mutex);
  Dispatcher::singleton().reclaim();
  auto it = impl_->records.find(name);
  if (it == impl_->records.end()) {
    for (auto& m : impl_->scan()) {
      if (m.plugin == name) return impl_->status_of(impl_->record_for(m));
    }
    throw PluginError(fmt::format("no plugin named '{}' is known", name));
  }
  return impl_->status_of(*it->second);
}

}  // namespace opd
