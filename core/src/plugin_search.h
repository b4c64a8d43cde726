#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "plugin_manifest.h"

namespace opd {

class PluginLibrary;

// Where plugins are found and what is checked before one is opened: the search path, the scan
// of its manifests, the permission checks and the opening of a checked library. The plugin
// manager's life-cycle code (plugin_manager.cpp) calls these under its mutex.

// The folder holding libopd_core.so: plugins are found relative to it, so that both the build
// tree and an install prefix work wherever they are moved. Empty when it cannot be found.
std::filesystem::path core_library_dir();

// The folders searched for manifests, in order (PluginManager::search_path's contract).
std::vector<std::filesystem::path> plugin_search_dirs();

// Every manifest in `dirs`; the first of a name wins. Broken manifests are logged and skipped
// (one bad file must not hide the others), unless `want` names that file (its stem), whose
// PluginError is thrown.
std::vector<PluginManifest> scan_manifests(const std::vector<std::filesystem::path>& dirs,
                                           const std::string& want = {});

// Whether a `load` argument or a `requires:` entry names a manifest file rather than a plugin.
bool looks_like_manifest_path(const std::string& s);

// The manifest of a plugin named by name (searched in plugin_search_dirs()) or by manifest path.
// Throws PluginError when it is not found or its manifest is broken.
PluginManifest find_manifest(const std::string& name_or_manifest);

// Refuses files and folders that someone else could write: loading runs their code. Throws
// PluginError naming `p` and the offending file or folder. OPD_ALLOW_INSECURE_PLUGINS=1 skips it.
void check_permissions(const std::filesystem::path& p);

// Checks the manifest's and the library's permissions and the library's sha256 (when the
// manifest has one), then opens the library (PluginLibrary's `private_copy`). Throws PluginError
// naming the file and what is wrong.
std::shared_ptr<PluginLibrary> open_checked_library(const PluginManifest& m, bool private_copy);

}  // namespace opd
