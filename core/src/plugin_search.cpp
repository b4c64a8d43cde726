#include "plugin_search.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "logging.h"
#include "opd/error.h"
#include "opd/plugin_manager.h"
#include "plugin_library.h"

namespace fs = std::filesystem;

namespace opd {

void check_permissions(const fs::path& p) {
  const char* allow = std::getenv("OPD_ALLOW_INSECURE_PLUGINS");
  if (allow && std::string(allow) == "1") return;
  for (const fs::path& f : {p, p.parent_path()}) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) continue;
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
      throw PluginError(fmt::format(
          "{}: refusing to load: {} '{}' is writable by {} (mode {:o}), so anyone who can write "
          "it could run code in this process; remove the write permission (chmod go-w) or set "
          "OPD_ALLOW_INSECURE_PLUGINS=1",
          p.string(), f == p ? "the file" : "its folder", f.string(),
          (st.st_mode & S_IWOTH) ? "others" : "its group", st.st_mode & 07777));
    }
  }
}

fs::path core_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugins), &info) == 0 || !info.dli_fname) return {};
  return fs::weakly_canonical(fs::path(info.dli_fname)).parent_path();
}

std::vector<fs::path> plugin_search_dirs() {
  std::vector<fs::path> out;
  if (fs::path lib = core_library_dir(); !lib.empty()) {
    out.push_back(lib.parent_path() / "plugins");   // build tree: build/{lib,plugins}
    out.push_back(lib / "opdispatch" / "plugins");  // install: <prefix>/lib/opdispatch/plugins
  }
  if (const char* env = std::getenv("OPD_PLUGIN_PATH")) {
    std::string s = env;
    for (size_t start = 0; start <= s.size();) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) out.emplace_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

std::vector<PluginManifest> scan_manifests(const std::vector<fs::path>& dirs,
                                           const std::string& want) {
  std::vector<PluginManifest> out;
  std::set<std::string> seen;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      try {
        PluginManifest m = read_manifest(f);
        if (seen.insert(m.plugin).second) out.push_back(std::move(m));
      } catch (const PluginError& e) {
        if (!want.empty() && f.stem() == want) throw;
        logger()->warn("skipping manifest: {}", e.msg());
      }
    }
  }
  return out;
}

bool looks_like_manifest_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

PluginManifest find_manifest(const std::string& name_or_manifest) {
  if (looks_like_manifest_path(name_or_manifest)) return read_manifest(name_or_manifest);
  std::vector<fs::path> dirs = plugin_search_dirs();
  for (auto& m : scan_manifests(dirs, name_or_manifest)) {
    if (m.plugin == name_or_manifest) return m;
  }
  std::string where;
  for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d.string();
  throw PluginError(fmt::format("plugin '{}' was not found in the search path ({})",
                                name_or_manifest, where.empty() ? "empty" : where));
}

std::shared_ptr<PluginLibrary> open_checked_library(const PluginManifest& m, bool private_copy) {
  check_permissions(m.path);
  check_permissions(m.library);
  if (m.sha256) {
    std::string actual = sha256_of_file_cached(m.library);
    if (actual != *m.sha256) {
      throw PluginError(fmt::format(
          "{}: sha256 mismatch for {}: the manifest expects {} but the file has {}; refusing to "
          "load a library that is not the one the manifest describes",
          m.where("sha256"), m.library.string(), *m.sha256, actual));
    }
  }
  return std::make_shared<PluginLibrary>(m.library, private_copy);
}

}  // namespace opd
