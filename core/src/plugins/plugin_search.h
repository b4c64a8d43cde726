#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "opd/export.h"
#include "plugins/plugin_manifest.h"

namespace opd {

class PluginLibrary;

// Where plugins are found and what is checked before one is opened: the search path, the scan
// of its manifests, the permission checks and the opening of a checked library. The plugin
// manager's life-cycle code (plugin_manager.cpp) calls these under its mutex.

// The folder holding libopd_core.so (its real path): plugins are found relative to it, so that
// both the build tree and an install prefix work wherever they are moved. Empty when it cannot
// be found.
std::filesystem::path core_library_dir();

// Whether `lib_dir`, the folder of libopd_core.so, is the lib/ folder of a build tree: its parent
// holds the CMakeCache.txt that CMake writes into every build tree and no install writes. Only a
// build tree's plugins/ folder (next to lib/) is searched: for an install prefix such as
// /usr/local, <prefix>/plugins belongs to no package and must not shadow the installed plugins.
OPD_API bool is_build_tree_lib_dir(const std::filesystem::path& lib_dir);

// The folders searched for manifests, in order, for a libopd_core.so in `lib_dir` (none from it
// when empty): <lib_dir>/../plugins when is_build_tree_lib_dir(lib_dir), then
// <lib_dir>/opdispatch/plugins (the install layout), then OPD_PLUGIN_PATH (colon-separated).
OPD_API std::vector<std::filesystem::path> plugin_search_dirs(const std::filesystem::path& lib_dir);
// plugin_search_dirs(core_library_dir()): PluginManager::search_path.
std::vector<std::filesystem::path> plugin_search_dirs();

// Every manifest in `dirs`; the first of a name wins. Never throws for one bad entry: a broken
// manifest, a folder or FIFO named *.yaml, a file over kMaxManifestBytes is logged (its
// PluginError, naming the file) and skipped, so one bad file hides nothing else; unless `want`
// names that file (its stem), whose PluginError is then thrown.
std::vector<PluginManifest> scan_manifests(const std::vector<std::filesystem::path>& dirs,
                                           const std::string& want = {});

// The manifest of a plugin named by name (searched in plugin_search_dirs()) or by manifest path.
// Throws PluginError when it is not found or its manifest is broken.
PluginManifest find_manifest(const std::string& name_or_manifest);

// Checks the manifest's and the library's permissions (Note [Plugin file permissions]: a file
// someone other than root or the effective user could replace is refused, naming the offending
// file or folder and its owner or mode; OPD_ALLOW_INSECURE_PLUGINS=1 skips this), opens the library
// once, checks the open file, verifies its sha256 (when the manifest has one) from that descriptor
// and maps the same descriptor (PluginLibrary; `private_copy` as there). Throws PluginError naming
// the file and what is wrong; nothing is mapped then.
std::shared_ptr<PluginLibrary> open_checked_library(const PluginManifest& m, bool private_copy);

}  // namespace opd
